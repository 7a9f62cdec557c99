/** The pieces an end-to-end run needs: the real Reftrack server, a static site, and Chromium. */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type ConsoleMessage } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, freePort, startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';

export { serverMain } from '../../../../scripts/e2e/reftrack-server.js';
const trackerFile = fileURLToPath(new URL('../../dist/tracker.iife.js', import.meta.url));
const fixture = fileURLToPath(new URL('./fixture.json', import.meta.url));

/** The API server; its origin is `http://api.shop.test:<port>` (*.shop.test resolves to 127.0.0.1 in the browser). */
export type ApiServer = ReftrackServer;

/** Seeds a fresh SQLite database with the fixture, then starts `reftrack-server start` on it. */
export function startApiServer(): Promise<ApiServer> {
  return startReftrackServer({ fixture, tmpPrefix: 'reftrack-tracker-e2e-', origin: (port) => `http://api.shop.test:${port}` });
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
    args: [...CHROMIUM_ARGS, '--host-resolver-rules=MAP *.shop.test 127.0.0.1, MAP shop.test 127.0.0.1'],
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
