/**
 * Operations (issue 22, docs/operator.md): readiness, metrics, unknown paths, degraded Redis.
 * Outages of a real database and drain under load are in the reliability suite
 * (reliability/operations.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

const TOKEN = 'metrics-token-for-tests-0123456789';
const CLICK = ROUTES.trackClick.path;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ env: { METRICS_TOKEN: TOKEN } });
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
