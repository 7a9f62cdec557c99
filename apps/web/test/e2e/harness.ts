/** What an end-to-end run needs: the real Reftrack server (built) on a fresh SQLite file, and Chromium. */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { DOMAIN_EVENT_VERSIONS, type DomainEventType, type EventActor } from '@reftrack/contract';
import { CHROMIUM, CHROMIUM_ARGS, E2E_BROWSER_USER_AGENT, repoRoot, startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';

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
    // A person's browser unless a test says otherwise: fetch's own user agent is a bot's to the
    // click's bot detection (docs/analytics.md), and a bot's click attributes nothing.
    headers: { 'content-type': 'application/json', 'user-agent': E2E_BROWSER_USER_AGENT, ...headers },
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

/** One outbox row as the server's `appendEvents` (apps/server/src/db/outbox.ts) writes it. */
export interface OutboxEventRow {
  event_id: string;
  type: DomainEventType;
  workspace_id: number | null;
  program_id: number | null;
  data: Record<string, unknown>;
  actor: EventActor | null;
  occurred_at: number;
}

interface SqliteDatabase {
  pragma(source: string): unknown;
  prepare(sql: string): { run(...params: unknown[]): unknown };
  transaction(fn: () => void): () => void;
  close(): void;
}

/**
 * Appends events to the running server's outbox, in its SQLite file, as a server action would:
 * the server's outbox consumers (the audit log) pick them up within a second. better-sqlite3 is
 * the server's own driver, loaded from its package.
 */
export function appendOutboxEvents(server: RunningServer, events: OutboxEventRow[]): void {
  const url = server.env.DATABASE_URL ?? '';
  if (!url.startsWith('sqlite:')) throw new Error(`appendOutboxEvents needs a SQLite DATABASE_URL, not ${url}`);
  const requireFromServer = createRequire(join(repoRoot, 'apps/server/package.json'));
  const Database = requireFromServer('better-sqlite3') as new (file: string) => SqliteDatabase;
  const db = new Database(url.slice('sqlite:'.length));
  try {
    db.pragma('busy_timeout = 5000');
    const insert = db.prepare('insert into outbox_events (event_id, type, version, workspace_id, program_id, payload, actor, occurred_at) values (?, ?, ?, ?, ?, ?, ?, ?)');
    db.transaction(() => {
      for (const e of events) insert.run(e.event_id, e.type, DOMAIN_EVENT_VERSIONS[e.type], e.workspace_id, e.program_id, JSON.stringify(e.data), e.actor ? JSON.stringify(e.actor) : null, e.occurred_at);
    })();
  } finally {
    db.close();
  }
}
