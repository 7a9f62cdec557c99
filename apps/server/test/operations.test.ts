/**
 * Operations (issue 22, docs/operator.md): readiness, metrics (on the main port behind a token,
 * and on the metrics listener), unknown paths, degraded Redis.
 * Outages of a real database and drain under load are in the reliability suite
 * (reliability/operations.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, ROUTES } from '@reftrack/contract';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { loadConfig, ConfigError } from '../src/config.js';
import { startServer } from '../src/server.js';

const TOKEN = 'metrics-token-for-tests-0123456789';
const CLICK = ROUTES.trackClick.path;

let s: TestServer;
beforeAll(async () => {
  // METRICS_PORT 0: the metrics listener on a free port of its own (METRICS_HOST defaults to 127.0.0.1).
  s = await startTestServer({ env: { METRICS_TOKEN: TOKEN, METRICS_PORT: '0', ALLOWED_HOSTS: 'metrics.internal' } });
});
afterAll(() => s?.close());

describe(`[${dbKind}] unknown paths`, () => {
  it('answer 404 in the JSON envelope, not the dashboard page', async () => {
    for (const path of ['/metrics', '/api/anything', '/wp-login.php', '/admin/config', '/programs/1/events/extra/deep']) {
      const res = await s.get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/json');
      expect(res.body, path).toEqual({ data: null, error: { status: 404, name: 'NotFoundError', message: 'Not found', details: {} } });
    }
  });
});

describe(`[${dbKind}] /readyz`, () => {
  it('answers 200 ready while the database answers and every migration is applied', async () => {
    const res = await s.get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', reasons: [], degraded: [] });
  });

  it('answers 503 naming the pending migrations while this release is ahead of the schema', async () => {
    const last = await s.db('knex_migrations').orderBy('id', 'desc').first();
    await s.db('knex_migrations').where({ id: last.id }).delete();
    try {
      const res = await s.get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('not_ready');
      expect(res.body.reasons).toEqual(['migrations pending: 1 (run reftrack-server migrate)']);
    } finally {
      await s.db('knex_migrations').insert(last);
    }
    expect((await s.get('/readyz')).status).toBe(200);
  });

  it('answers 503 "draining" from the moment a drain starts, while the process still serves', async () => {
    const t = await startTestServer();
    try {
      const draining = t.running.drain(300);
      const res = await t.get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body.reasons).toEqual(['draining: the process is shutting down']);
      expect(res.headers.get('connection')).toBe('close');
      expect((await t.get('/healthz')).status).toBe(200);
      await draining;
    } finally {
      await t.close();
    }
  });

  it('refuses a foreign Host with 421 during a drain, closing the connection, and goes on serving', async () => {
    const t = await startTestServer();
    try {
      const port = new URL(t.url).port;
      const draining = t.running.drain(300);
      // The Host gate answers at once; the drain's Connection: close must not come after that answer.
      const rebound = await new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: ROUTES.healthz.path + 'x', headers: { host: 'evil.example' } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }));
        });
        req.on('error', reject);
      });
      expect(rebound.status).toBe(421);
      expect(rebound.connection).toBe('close');
      expect(JSON.parse(rebound.text).error.message).toBe(ERRORS.hostNotAllowed.message);
      expect((await t.get('/healthz')).status).toBe(200);
      await draining;
    } finally {
      await t.close();
    }
  });
});

describe(`[${dbKind}] /metrics`, () => {
  it('is a 404 with a wrong token, and the Prometheus text with METRICS_TOKEN', async () => {
    expect((await s.get('/metrics', { authorization: 'Bearer wrong' })).status).toBe(404);
    await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' });
    await s.get('/api/dashboard/programs');
    const res = await s.get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    // Per route pattern and status class; the click counted whichever lane answered it.
    expect(res.text).toMatch(/reftrack_http_request_duration_seconds_count\{method="GET",route="\/api\/dashboard\/programs",status_class="4xx"\} 1/);
    expect(res.text).toMatch(new RegExp(`reftrack_http_request_duration_seconds_count\\{method="POST",route="${CLICK.replace(/\//g, '\\/')}",status_class="2xx"\\} 1`));
    expect(res.text).toMatch(/reftrack_click_batch_size_count [1-9]/);
    expect(res.text).toMatch(/reftrack_click_batch_commit_seconds_count\{outcome="committed"\} [1-9]/);
    expect(res.text).toMatch(/reftrack_click_queue_depth\{state="queued"\} 0/);
    expect(res.text).toMatch(/reftrack_outbox_pending_events\{consumer="[a-z_.-]+"\} \d+/);
    expect(res.text).toMatch(/reftrack_database_up 1/);
    expect(res.text).toMatch(/reftrack_process_resident_memory_bytes \d+/);
    if (dbKind === 'postgres') expect(res.text).toMatch(/reftrack_db_pool_connections\{state="used"\} \d+/);
  });

  it('counts the leads and sales of each group commit (PostgreSQL; absent on SQLite, which commits its own way)', async () => {
    const key = `group-metric-${Date.now()}`;
    await serverLead(s, await click(s), key);
    expect((await sale(s, { transaction_id: `${key}-txn`, customer_key: key })).status).toBe(200);
    const text = (await s.get('/metrics', { authorization: `Bearer ${TOKEN}` })).text;
    if (dbKind === 'sqlite') {
      expect(text).not.toMatch(/reftrack_tracking_group_size_count/);
      return;
    }
    expect(text).toMatch(/reftrack_tracking_group_size_count\{route="lead"\} [1-9]/);
    expect(text).toMatch(/reftrack_tracking_group_size_count\{route="sale"\} [1-9]/);
    expect(text).toMatch(/reftrack_tracking_group_size_bucket\{le="1",route="sale"\} [1-9]/);
  });

  it('shows whether the program key watch vouches for its cache (PostgreSQL; absent on SQLite)', async () => {
    const metrics = async () => (await s.get('/metrics', { authorization: `Bearer ${TOKEN}` })).text;
    if (dbKind === 'sqlite') {
      expect(await metrics()).not.toMatch(/reftrack_program_key_notices_trusted \d/);
      return;
    }
    // It vouches from its first ping heard on (db/program-key-notices.ts); a busy host may delay one.
    const deadline = Date.now() + 5000;
    let text = await metrics();
    while (!/reftrack_program_key_notices_trusted 1/.test(text) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      text = await metrics();
    }
    expect(text).toMatch(/reftrack_program_key_notices_trusted 1/);
  });

  it('counts 429s per route', async () => {
    const ip = '10.250.0.1';
    let refused = 0;
    for (let i = 0; i < 130 && refused === 0; i++) {
      const res = await s.post(ROUTES.trackSale.path, {}, { 'x-forwarded-for': ip, authorization: 'Bearer nope' });
      if (res.status === 429) refused++;
    }
    expect(refused).toBe(1);
    const res = await s.get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(res.text).toMatch(new RegExp(`reftrack_rate_limited_total\\{route="${ROUTES.trackSale.path.replace(/\//g, '\\/')}"\\} 1`));
  });
});

const NOT_FOUND = { data: null, error: { status: 404, name: 'NotFoundError', message: 'Not found', details: {} } };
const scrape = async (path = '/metrics', init: RequestInit = {}) => {
  const res = await fetch(`${s.running.metricsUrl}${path}`, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
};
/** The value of one sample line of a Prometheus text (0 when absent). */
const sample = (text: string, line: string): number => {
  const at = text.split('\n').find((l) => l.startsWith(`${line} `));
  return at ? Number(at.slice(line.length + 1)) : 0;
};

describe(`[${dbKind}] a client that goes away mid-body`, () => {
  const unavailable = async (): Promise<number> => {
    const text = (await s.get('/metrics', { authorization: `Bearer ${TOKEN}` })).text;
    return Number(/^reftrack_database_unavailable_total (\d+)/m.exec(text)?.[1]);
  };

  /** Sends a request head and part of its body, then closes; resolves once the server has seen it go. */
  async function abortMidBody(path: string, headers: string): Promise<void> {
    const { port } = new URL(s.url);
    await new Promise<void>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${headers}\r\n{"affiliate_url":"https://`);
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => setTimeout(resolve, 100));
    });
  }

  it('is not taken for an unreachable database (the click lane and the Koa routes alike)', async () => {
    const before = await unavailable();
    expect(Number.isFinite(before)).toBe(true);
    await abortMidBody(CLICK, `X-Forwarded-For: 10.77.0.1\r\n`);
    await abortMidBody(ROUTES.trackLead.path, `X-Forwarded-For: 10.77.0.2\r\n`);
    await abortMidBody(ROUTES.trackSale.path, `Authorization: Bearer ${KEY1}\r\n`);
    expect(await unavailable()).toBe(before);
    const res = await s.get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(res.text).toMatch(/reftrack_database_up 1/);
  });
});

describe(`[${dbKind}] the metrics listener (METRICS_PORT, METRICS_HOST)`, () => {
  it('serves GET /metrics without a token on its own port, on 127.0.0.1 by default', async () => {
    expect(s.running.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(new URL(s.running.metricsUrl!).port).not.toBe(new URL(s.url).port);
    await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' });
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toMatch(new RegExp(`reftrack_http_request_duration_seconds_count\\{method="POST",route="${CLICK.replace(/\//g, '\\/')}",status_class="2xx"\\} [1-9]`));
    expect(res.text).toMatch(/reftrack_process_resident_memory_bytes \d+/);
  });

  it('is the same registry as the main port\'s /metrics, which still needs METRICS_TOKEN', async () => {
    expect((await s.get('/metrics')).status).toBe(404);
    const main = await s.get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(main.status).toBe(200);
    const before = sample((await scrape()).text, 'reftrack_http_request_duration_seconds_count{method="GET",route="/metrics",status_class="2xx"}');
    await s.get('/metrics', { authorization: `Bearer ${TOKEN}` });
    expect(sample((await scrape()).text, 'reftrack_http_request_duration_seconds_count{method="GET",route="/metrics",status_class="2xx"}')).toBe(before + 1);
  });

  it('answers every other path with 404 and other methods with 405, in the JSON envelope', async () => {
    for (const path of ['/', '/healthz', '/api/v1/track/click', '/metrics/extra', '/metricsx']) {
      const res = await scrape(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/json');
      expect(JSON.parse(res.text), path).toEqual(NOT_FOUND);
    }
    const post = await scrape('/metrics', { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(JSON.parse(post.text)).toEqual({ data: null, error: { status: 405, name: 'MethodNotAllowedError', message: 'Method not allowed', details: {} } });
    const head = await scrape('/metrics', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('refuses a Host that names another site (DNS rebinding) with 421; answers an address, localhost and the allowed names', async () => {
    const port = new URL(s.running.metricsUrl!).port;
    const withHost = (host: string) =>
      new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/metrics', headers: { host } }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
      });
    const rebound = await withHost(`evil.example:${port}`);
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.text).error.message).toBe(ERRORS.hostNotAllowed.message);
    expect(rebound.text).not.toContain('reftrack_');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, '10.0.0.7', `metrics.internal:${port}`]) {
      expect((await withHost(host)).status, host).toBe(200);
    }
  });

  it('keeps answering through a drain, showing reftrack_draining 1, and stops with the process', async () => {
    const t = await startTestServer({ env: { METRICS_PORT: '0' } });
    try {
      const draining = t.running.drain(300);
      const res = await fetch(`${t.running.metricsUrl}/metrics`);
      expect(res.status).toBe(200);
      expect(sample(await res.text(), 'reftrack_draining')).toBe(1);
      await draining;
      await expect(fetch(`${t.running.metricsUrl}/metrics`)).rejects.toThrow();
    } finally {
      await t.close();
    }
  });

  it('is not started without METRICS_PORT', async () => {
    const t = await startTestServer({ env: { METRICS_TOKEN: TOKEN } });
    try {
      expect(t.running.metricsUrl).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('refuses a METRICS_PORT that is not a port number at start', () => {
    for (const value of ['x', '-1', '65536', '80.5']) expect(() => loadConfig({ METRICS_PORT: value }), value).toThrow(new ConfigError(`METRICS_PORT must be an integer 0-65535 (got "${value}")`));
  });

  it('stops the start when its port is taken, closing what it opened', async () => {
    const taken = Number(new URL(s.running.metricsUrl!).port);
    const config = { ...s.running.deps.config, port: 0, metricsPort: taken };
    await expect(startServer(config, { logger: pino({ level: 'silent' }) })).rejects.toThrow(/EADDRINUSE/);
    // The first server is untouched and still serves its metrics.
    expect((await scrape()).status).toBe(200);
  });
});

describe(`[${dbKind}] database wait metrics`, () => {
  it('times every connection a query takes from the pool (reftrack_db_pool_acquire_seconds)', async () => {
    const count = async () => sample((await scrape()).text, 'reftrack_db_pool_acquire_seconds_count{outcome="acquired"}');
    const before = await count();
    for (let i = 0; i < 5; i++) expect((await s.get('/readyz')).status).toBe(200);
    // Each readiness check runs at least one query, each query takes a connection.
    expect((await count()) - before).toBeGreaterThanOrEqual(5);
    expect((await scrape()).text).toMatch(/reftrack_db_pool_acquire_seconds_bucket\{le="0.001",outcome="acquired"\} \d+/);
  });

  it(dbKind === 'sqlite' ? 'times the wait of each write for the file\'s write lock (reftrack_sqlite_write_lock_wait_seconds)' : 'has no SQLite write lock series on PostgreSQL', async () => {
    const count = async () => sample((await scrape()).text, 'reftrack_sqlite_write_lock_wait_seconds_count');
    const before = await count();
    await serverLead(s, await click(s), `lock-wait-${Date.now()}`);
    const sale = await s.post(ROUTES.trackSale.path, { transaction_id: `lock-wait-${dbKind}-${Date.now()}`, amount_cents: 1000, customer_key: 'nobody-with-this-key' }, bearer(KEY1));
    expect(sale.status).toBe(400);
    if (dbKind === 'sqlite') expect((await count()) - before).toBeGreaterThanOrEqual(1);
    else expect(await count()).toBe(0);
  });
});

/** A redis-server of this test's own on a free port (the shared one is never stopped). */
async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => (sock.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

const stopRedis = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));

describe(`[${dbKind}] Redis unreachable: degraded, not down`, () => {
  it('keeps tracking with per-process limits, says so on /readyz and in the metrics, and shares limits again when Redis returns', async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const lines: Array<{ msg: string }> = [];
    const t = await startTestServer({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, METRICS_TOKEN: TOKEN } });
    // The server's logger is silent in tests; its state changes are read from ServiceState.
    const state = t.running.deps.ops.state;
    const log = t.running.deps.logger;
    const warn = log.warn.bind(log);
    (log as unknown as { warn: unknown }).warn = (obj: unknown, msg?: string) => (lines.push({ msg: String(msg ?? obj) }), warn(obj as object, msg));
    try {
      for (let i = 0; i < 50 && state.redisUp !== true; i++) await new Promise((r) => setTimeout(r, 50));
      expect(state.redisUp).toBe(true);
      expect((await t.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' })).status).toBe(200);

      await stopRedis(redis);
      for (let i = 0; i < 100 && state.redisUp !== false; i++) await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < 20; i++) {
        const res = await t.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' });
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBe('60');
      }
      const ready = await t.get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.degraded).toEqual(['redis unreachable: rate limits are per process']);
      const metrics = (await t.get('/metrics', { authorization: `Bearer ${TOKEN}` })).text;
      expect(metrics).toMatch(/reftrack_redis_up 0/);
      expect(metrics).toMatch(/reftrack_rate_limit_memory_fallback_total [1-9]\d*/);
      // The memory fallback still limits: one client address gets its 60 clicks a minute, then 429.
      const statuses: number[] = [];
      for (let i = 0; i < 61; i++) statuses.push((await t.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'x-forwarded-for': '10.251.0.9' })).status);
      expect(statuses.filter((x) => x === 429)).toHaveLength(1);
      expect(lines.filter((l) => l.msg.startsWith('redis unreachable'))).toHaveLength(1);

      redis = await startRedis(port);
      for (let i = 0; i < 200 && state.redisUp !== true; i++) await new Promise((r) => setTimeout(r, 50));
      expect(state.redisUp).toBe(true);
      expect((await t.get('/readyz')).body.degraded).toEqual([]);
      expect(lines.filter((l) => l.msg.startsWith('redis reachable again'))).toHaveLength(1);
      expect(lines.filter((l) => l.msg.startsWith('redis unreachable'))).toHaveLength(1);
    } finally {
      await t.close();
      await stopRedis(redis);
    }
  });
});
