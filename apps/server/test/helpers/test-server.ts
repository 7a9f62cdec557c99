/** Starts the real Koa server in-process on a fresh database and talks to it over HTTP. */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import type { Knex } from 'knex';
import { startServer, type RunningServer } from '../../src/server.js';
import { loadConfig } from '../../src/config.js';
import { loadFixture, type Fixture } from '../../src/seed/fixture.js';
import type { DemoMode, Faults } from '../../src/deps.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { baseFixture } from './fixture.js';

export interface TestServer {
  url: string;
  db: Knex;
  running: RunningServer;
  /**
   * The server's `now` (deps.now): the wall clock moved by `offsetMs`, or, while `at` is set, an
   * instant (unix ms) that stands still until a test moves it — for rules that turn on one millisecond.
   */
  clock: { offsetMs: number; at: number | null; now(): number };
  faults: Faults;
  /** Each call looks like a new client address, so per-IP limits don't interfere between tests. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  get(path: string, headers?: Record<string, string>): Promise<TestResponse>;
  raw(path: string, init: RequestInit): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON
  text: string;
}

/**
 * The encryption key test servers get unless a test gives its own (or '' for none): without one a
 * PostgreSQL run would keep a development key file under ./.reftrack/ of the working directory.
 */
export const TEST_ENCRYPTION_KEY = randomBytes(32).toString('base64');

export const TEST_BROWSER_USER_AGENT = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

let ipCounter = 1;
export const freshIp = (): string => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;

export async function startTestServer(options: { fixture?: Fixture; env?: Record<string, string>; demo?: DemoMode; logger?: pino.Logger } = {}): Promise<TestServer> {
  const database: TestDatabase = await createTestDatabase();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, TRUST_PROXY: '1', LOG_LEVEL: 'silent', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...options.env });
  const clock: TestServer['clock'] = { offsetMs: 0, at: null, now: () => clock.at ?? Date.now() + clock.offsetMs };
  const faults: Faults = {};
  const running = await startServer(config, { logger: options.logger ?? pino({ level: 'silent' }), now: () => clock.now(), faults, ...(options.demo ? { demo: options.demo } : {}) });
  await loadFixture(running.deps.db, options.fixture ?? baseFixture());
  const request = async (path: string, init: RequestInit): Promise<TestResponse> => {
    const headers = new Headers(init.headers);
    if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', freshIp());
    // A person's browser, unless a test says otherwise: fetch's own user agent ("node") is a bot's
    // to the click's bot detection (docs/analytics.md), and a bot's click attributes nothing.
    if (!headers.has('user-agent')) headers.set('user-agent', TEST_BROWSER_USER_AGENT);
    const res = await fetch(running.url + path, { ...init, headers });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, text };
  };
  return {
    url: running.url,
    db: running.deps.db,
    running,
    clock,
    faults,
    post: (path, body, headers = {}) =>
      request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
    get: (path, headers = {}) => request(path, { method: 'GET', headers }),
    raw: request,
    async close() {
      await running.close();
      await database.drop();
    },
  };
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
