/**
 * PostgreSQL or Redis stops for a moment (a proxy cuts every connection). PostgreSQL: requests fail
 * with the route's 500 and Retry-After, one log line per change of state, /readyz 503, no partial
 * write, and recovery on its own. Redis: tracking goes on under per-process limits (degraded).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';
import { TcpProxy } from './helpers/tcp-proxy.js';

let db: Database;
let server: ServerProcess;
const pgProxy = new TcpProxy(5432);
const redisProxy = new TcpProxy(6379);
const { fixture, keys } = programsFixture(1);
let customerKey = '';

beforeAll(async () => {
  db = await freshDatabase('postgres');
  await pgProxy.start();
  await redisProxy.start();
  const viaProxy = db.url.replace(/127\.0\.0\.1:5432/, `127.0.0.1:${pgProxy.port}`);
  const env = { DATABASE_URL: viaProxy, REDIS_URL: `redis://127.0.0.1:${redisProxy.port}`, TRUST_PROXY: '1', LOG_LEVEL: 'warn', DATABASE_POOL_MAX: '4' };
  await seed({ ...env, DATABASE_URL: db.url }, fixture);
  server = await spawnServer(env);
  const click = await postJson(`${server.url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1' }, { 'x-forwarded-for': '192.0.2.200' });
  expect(click.status).toBe(200);
  customerKey = 'outage-customer';
  // The lead is what every sale below attributes to: it must have landed before any outage starts.
  const lead = await postJson(`${server.url}/api/v1/track/lead`, { click_id: click.body.click_id, customer_key: customerKey }, { authorization: `Bearer ${keys[0]}`, 'x-forwarded-for': '192.0.2.200' });
  expect(lead.status, JSON.stringify(lead.body)).toBe(200);
});
afterAll(async () => {
  await server?.kill();
  await pgProxy.close();
  await redisProxy.close();
  await db?.drop();
});

const sale = (txn: string) => postJson(`${server.url}/api/v1/track/sale`, { transaction_id: txn, amount_cents: 1000, customer_key: customerKey }, { authorization: `Bearer ${keys[0]}` });

async function eventually(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('did not recover in time');
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a dependency stops for a moment', () => {
  it('PostgreSQL: 500 in the envelope, nothing partial, process up, recovery', async () => {
    pgProxy.outage();
    const during = await Promise.all(['pg-out-1', 'pg-out-2', 'pg-out-3'].map(sale));
    for (const res of during) {
      expect([500, 503]).toContain(res.status);
      expect(res.body).toMatchObject({ data: null, error: { status: res.status, code: 'internal_error' } });
      if (res.status === 500) expect(res.headers.get('retry-after')).toBe('5');
    }
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(503);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { reasons: string[] }).reasons).toContain('database unreachable');
    // One line for the change of state, not a stack per request.
    expect(server.output().match(/database unreachable: requests that need it/g)).toHaveLength(1);
    expect(server.output()).not.toMatch(/"msg":"request failed"/);
    expect(server.child.exitCode).toBeNull();
    pgProxy.restore();
    await eventually(async () => (await fetch(`${server.url}/healthz`)).status === 200);
    await eventually(async () => (await fetch(`${server.url}/readyz`)).status === 200);
    await eventually(async () => /database reachable again/.test(server.output()));
    const after = await sale('pg-after');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    const rows = await query<{ processor_event_id: string }>(db, `select processor_event_id from sale_events where processor_event_id like 'pg-%'`);
    expect(rows.map((r) => r.processor_event_id)).toEqual(['pg-after']);
    const orphans = await query(db, 'select c.id from commissions c left join sale_events s on s.id = c.sale_id where s.id is null');
    expect(orphans).toEqual([]);
  });

  it('PostgreSQL: clicks (written by the click batch writer) fail with 500 and record nothing, then record again', async () => {
    const clickFrom = (ip: string, session: string) =>
      postJson(`${server.url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1', session_id: session }, { 'x-forwarded-for': ip });
    // Warm the link cache so that the click reaches the batch writer during the outage.
    expect((await clickFrom('192.0.2.210', 'warm')).status).toBe(200);
    pgProxy.outage();
    const during = await Promise.all([1, 2, 3].map((n) => clickFrom(`192.0.2.21${n}`, 'pg-out-click')));
    for (const res of during) {
      expect(res.status).toBe(500);
      expect(res.body).toMatchObject({ data: null, error: { status: 500, message: 'Click tracking failed' } });
    }
    expect(server.child.exitCode).toBeNull();
    pgProxy.restore();
    await eventually(async () => (await clickFrom('192.0.2.220', 'pg-after-click')).status === 200);
    const rows = await query<{ session_id: string }>(db, `select session_id from click_events where session_id like 'pg-%click'`);
    expect(rows.map((r) => r.session_id)).toEqual(['pg-after-click']);
    // Nor any event: the batches' clicks.recorded events count exactly the clicks stored.
    const events = await query<{ payload: string }>(db, `select payload from outbox_events where type = 'clicks.recorded'`);
    const [stored] = await query<{ n: string }>(db, 'select count(*) as n from click_events where is_test = false');
    expect(events.reduce((n, e) => n + (JSON.parse(e.payload) as { clicks: number }).clicks, 0)).toBe(Number(stored.n));
  });

  it('Redis: tracking goes on under per-process limits, /readyz names the degradation, one log line each way', async () => {
    redisProxy.outage();
    await new Promise((r) => setTimeout(r, 200));
    for (const ip of ['192.0.2.201', '192.0.2.203', '192.0.2.204']) {
      const during = await postJson(`${server.url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1' }, { 'x-forwarded-for': ip });
      expect(during.status, JSON.stringify(during.body)).toBe(200);
    }
    expect((await sale('redis-out-sale')).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { degraded: string[] }).degraded).toEqual(['redis unreachable: rate limits are per process']);
    expect(server.output().match(/redis unreachable: rate limits fall back/g)).toHaveLength(1);
    expect(server.child.exitCode).toBeNull();
    redisProxy.restore();
    await eventually(async () => /redis reachable again/.test(server.output()));
    expect((await postJson(`${server.url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1' }, { 'x-forwarded-for': '192.0.2.202' })).status).toBe(200);
  });
});
