/** The pieces an end-to-end run needs: the real Reftrack server, a static site, and Chromium. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage } from 'playwright-core';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const serverMain = join(repoRoot, 'apps/server/dist/main.js');
export const CHROMIUM = '/usr/bin/chromium';
const trackerFile = fileURLToPath(new URL('../../dist/tracker.iife.js', import.meta.url));
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

export interface ApiServer {
  port: number;
  /** Origin the browser uses; *.shop.test resolves to 127.0.0.1 in the browser. */
  origin: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Seeds a fresh SQLite database with the fixture, then starts `reftrack-server start` on it. */
export async function startApiServer(): Promise<ApiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'reftrack-tracker-e2e-'));
  const port = await freePort();
  const origin = `http://api.shop.test:${port}`;
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 't.db')}`,
    PUBLIC_BASE_URL: origin,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  execFileSync(process.execPath, [serverMain, 'seed', '--file', fixture], { cwd: repoRoot, env, stdio: 'pipe' });
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
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`reftrack server did not answer /healthz within 20 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, origin, output: () => out, stop };
}

export interface Site {
  port: number;
  /** `http://<sub>.shop.test:<port>` */
  at: (sub: string) => string;
  stop: () => Promise<void>;
}

/**
 * The advertiser's site. Every path answers a page that loads the tracker with
 * `data-reftrack-program-id` and `data-reftrack-debug`; `/open...` pages name program 2 and
 * `/consent...` pages add `data-reftrack-require-consent`. `scriptSrc` null serves the built
 * bundle from this site itself, and then the tag also names the API with `data-reftrack-api-base`.
 */
export async function startSite(api: ApiServer, scriptSrc: string | null): Promise<Site> {
  const port = await freePort();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/tracker.js') {
      res.writeHead(200, { 'Content-Type': 'application/javascript' });
      res.end(readFileSync(trackerFile));
      return;
    }
    const attrs = [
      `src="${scriptSrc ?? `http://cdn.shop.test:${port}/tracker.js`}"`,
      `data-reftrack-program-id="${path.startsWith('/open') ? 2 : 1}"`,
      'data-reftrack-debug',
      path.startsWith('/consent') ? 'data-reftrack-require-consent' : '',
      scriptSrc ? '' : `data-reftrack-api-base="${api.origin}"`,
    ];
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Shop page</title><script ${attrs.join(' ')}></script></head><body>shop</body></html>`);
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    port,
    at: (sub) => `http://${sub}.shop.test:${port}`,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** The server serves the bundle at /tracker.js once it depends on @reftrack/tracker; use it then. */
export async function servedTrackerUrl(api: ApiServer): Promise<string | null> {
  const r = await fetch(`http://127.0.0.1:${api.port}/tracker.js`).catch(() => null);
  return r && r.ok && (await r.text()) === readFileSync(trackerFile, 'utf8') ? `${api.origin}/tracker.js` : null;
}

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-quic',
      '--no-first-run',
      '--disable-sync',
      '--host-resolver-rules=MAP *.shop.test 127.0.0.1, MAP shop.test 127.0.0.1',
    ],
  });
}

export interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  status?: number;
  response?: Record<string, unknown>;
}

/** Records the context's calls to the tracking API and its pages' console lines. */
export function record(context: BrowserContext, api: ApiServer) {
  const calls: Seen[] = [];
  const consoleLines: string[] = [];
  const parsing: Promise<unknown>[] = [];
  context.on('request', (req) => {
    if (!req.url().startsWith(api.origin + '/api/')) return;
    calls.push({ method: req.method(), url: req.url(), headers: req.headers(), body: req.method() === 'POST' ? req.postDataJSON() : null });
  });
  context.on('response', (res) => {
    const seen = calls.find((c) => c.url === res.url() && c.method === res.request().method() && c.status === undefined);
    if (!seen) return;
    seen.status = res.status();
    if (seen.method === 'POST') parsing.push(res.json().then((b) => (seen.response = b), () => undefined));
  });
  const onConsole = (m: ConsoleMessage) => consoleLines.push(`${m.type()} ${m.text()}`);
  context.on('page', (p) => p.on('console', onConsole));
  return {
    calls,
    consoleLines,
    posts: (path: string) => calls.filter((c) => c.method === 'POST' && c.url === api.origin + path),
    /** Waits until every response seen so far has its body parsed. */
    settled: () => Promise.all(parsing),
  };
}
