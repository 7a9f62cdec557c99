/**
 * Real server processes for the reliability suite: spawned from the built `dist/main.js`, each with
 * its own environment, their stdout and stderr kept for inspection.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import type { Fixture } from '../../src/seed/fixture.js';

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'main.js');
const run = promisify(execFile);
/**
 * The encryption key of spawned servers unless a test sets its own: without one, a server on
 * PostgreSQL would keep a development key file under ./.reftrack/ of the working directory.
 */
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export async function seed(env: Record<string, string>, fixture: Fixture): Promise<void> {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-rel-')), 'fixture.json');
  fs.writeFileSync(file, JSON.stringify(fixture));
  await run(process.execPath, [MAIN, 'seed', '--file', file], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' } });
}

/** Runs an operator command (`reftrack-server ARGS`) of this release, or of the release whose `dist/main.js` is `main`; its stdout. */
export async function operatorCommand(env: Record<string, string>, args: string[], main = MAIN): Promise<string> {
  const { stdout } = await run(process.execPath, [main, ...args], { env: { ...process.env, ENCRYPTION_KEY, LOG_LEVEL: 'warn', ...env } });
  return stdout.trim();
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `reftrack-server start`: this release's, or the one whose `dist/main.js` is `main` (an earlier release, reliability/rolling-upgrade.test.ts). */
export async function spawnServer(env: Record<string, string>, main = MAIN): Promise<ServerProcess> {
  const port = await freePort();
  const chunks: string[] = [];
  const child = spawn(process.execPath, [main, 'start'], {
    env: { ...process.env, LOG_LEVEL: 'info', ENCRYPTION_KEY, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => chunks.push(d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early: ${chunks.join('')}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server did not become healthy: ${chunks.join('')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    child,
    output: () => chunks.join(''),
    kill: (signal: NodeJS.Signals = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}

export interface JsonResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON under test
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
