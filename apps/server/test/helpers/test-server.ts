/** Starts the real Koa server in-process on a fresh database and talks to it over HTTP. */
import pino from 'pino';
import type { Knex } from 'knex';
import { startServer, type RunningServer } from '../../src/server.js';
import { loadConfig } from '../../src/config.js';
import { loadFixture, type Fixture } from '../../src/seed/fixture.js';
import type { Faults } from '../../src/deps.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { baseFixture } from './fixture.js';

export interface TestServer {
  url: string;
  db: Knex;
  running: RunningServer;
  clock: { offsetMs: number; now(): number };
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

let ipCounter = 1;
export const freshIp = (): string => `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}`;

export async function startTestServer(options: { fixture?: Fixture; env?: Record<string, string> } = {}): Promise<TestServer> {
  const database: TestDatabase = await createTestDatabase();
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, TRUST_PROXY: '1', LOG_LEVEL: 'silent', ...options.env });
  const clock = { offsetMs: 0, now: () => Date.now() + clock.offsetMs };
  const faults: Faults = {};
  const running = await startServer(config, { logger: pino({ level: 'silent' }), now: () => clock.now(), faults });
  await loadFixture(running.deps.db, options.fixture ?? baseFixture());
  const request = async (path: string, init: RequestInit): Promise<TestResponse> => {
    const headers = new Headers(init.headers);
    if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', freshIp());
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
