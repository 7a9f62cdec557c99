/** What an end-to-end run needs: the real Reftrack server (built) on a fresh SQLite file, and Chromium. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, repoRoot, startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';

export { repoRoot } from '../../../../scripts/e2e/reftrack-server.js';
export const webIndex = join(repoRoot, 'apps/web/dist/index.html');
const fixture = fileURLToPath(new URL('./fixture.json', import.meta.url));

export type RunningServer = ReftrackServer;

/**
 * Seeds a fresh database with the fixture, then runs `reftrack-server start` on it, with the
 * development identity provider and the memory rate limiter whatever the shell has set.
 */
export async function startServer(): Promise<RunningServer> {
  if (!existsSync(webIndex)) throw new Error(`${webIndex} is missing: build the web app first (pnpm --filter @reftrack/web build)`);
  return startReftrackServer({ fixture, tmpPrefix: 'reftrack-web-e2e-', env: { LOG_LEVEL: 'warn', OIDC_ISSUER: undefined, OIDC_AUDIENCE: undefined, REDIS_URL: undefined } });
}

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
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
