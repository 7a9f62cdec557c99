/** What an end-to-end run needs: the real Reftrack server (built) on a fresh SQLite file, and Chromium. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const serverMain = join(repoRoot, 'apps/server/dist/main.js');
export const webIndex = join(repoRoot, 'apps/web/dist/index.html');
export const CHROMIUM = '/usr/bin/chromium';
const fixture = fileURLToPath(new URL('./fixture.json', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface RunningServer {
  origin: string;
  env: NodeJS.ProcessEnv;
  /** `reftrack-server <args>` on the same database */
  command: (...args: string[]) => string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Seeds a fresh database with the fixture, then runs `reftrack-server start` on it. */
export async function startServer(): Promise<RunningServer> {
  if (!existsSync(serverMain)) throw new Error(`${serverMain} is missing: build the server first (pnpm --filter @reftrack/server build)`);
  if (!existsSync(webIndex)) throw new Error(`${webIndex} is missing: build the web app first (pnpm --filter @reftrack/web build)`);
  const dir = mkdtempSync(join(tmpdir(), 'reftrack-web-e2e-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'web.db')}`,
    PUBLIC_BASE_URL: origin,
    LOG_LEVEL: 'warn',
  };
  delete env.OIDC_ISSUER;
  delete env.OIDC_AUDIENCE;
  delete env.REDIS_URL;
  const command = (...args: string[]) => execFileSync(process.execPath, [serverMain, ...args], { cwd: repoRoot, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  command('seed', '--file', fixture);
  const child: ChildProcess = spawn(process.execPath, [serverMain, 'start'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`reftrack server exited with ${child.exitCode}:\n${out}`);
    if (await fetch(`${origin}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`reftrack server did not answer /healthz within 20 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { origin, env, command, output: () => out, stop };
}

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'],
  });
}

/** JSON call to the server outside the browser (the advertiser's backend, the tracker). */
export async function call(origin: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(origin + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON answers
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, body: json, text };
}
