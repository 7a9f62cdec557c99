/**
 * Several processes, one truth: two servers on one PostgreSQL database and one Redis behave as one
 * (idempotency and rate limits hold across processes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
let db: Database;
let servers: ServerProcess[] = [];
const { fixture, keys } = programsFixture(5);

beforeAll(async () => {
  db = await freshDatabase('postgres');
  const env = { DATABASE_URL: db.url, REDIS_URL, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
  await seed(env, fixture);
  servers = await Promise.all([spawnServer(env), spawnServer(env)]);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  await db?.drop();
});

const ip = () => `198.51.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

describe('two processes on PostgreSQL + Redis', () => {
  it('500 concurrent sales over 50 transaction ids, spread over both: 50 sales, 50 commissions, 450 × 409 with the right sale id, no 5xx', async () => {
    // One lead customer per program; ten transaction ids per program, each sent ten times (100 per key < 120/min).
    const customers: string[] = [];
    for (let p = 0; p < 5; p++) {
      const click = await postJson(`${servers[p % 2].url}/api/v1/track/click`, { affiliate_url: `https://rel.test/?aff=p${p + 1}` }, { 'x-forwarded-for': ip() });
      expect(click.status).toBe(200);
      const lead = await postJson(`${servers[p % 2].url}/api/v1/track/lead`, { click_id: click.body.click_id, customer_key: `c${p}` }, { authorization: `Bearer ${keys[p]}`, 'x-forwarded-for': ip() });
      expect(lead.status).toBe(200);
      customers.push(`c${p}`);
    }
    const run = randomBytes(4).toString('hex');
    const requests = Array.from({ length: 500 }, (_, i) => {
      const txn = i % 50;
      const program = txn % 5;
      return { server: servers[i % 2], txn: `rel-${run}-${txn}`, key: keys[program], customer: customers[program] };
    });
    const answers = await Promise.all(requests.map((r) => postJson(`${r.server.url}/api/v1/track/sale`, { transaction_id: r.txn, amount_cents: 5000, customer_key: r.customer }, { authorization: `Bearer ${r.key}` }).then((res) => ({ ...r, res }))));
    expect(answers.filter((a) => a.res.status >= 500)).toEqual([]);
    const ok = answers.filter((a) => a.res.status === 200);
    const dup = answers.filter((a) => a.res.status === 409);
    expect(ok).toHaveLength(50);
    expect(dup).toHaveLength(450);
    const saleIdByTxn = new Map(ok.map((a) => [a.txn, a.res.body.data.sale_id]));
    expect(saleIdByTxn.size).toBe(50);
    for (const d of dup) expect(d.res.body.error.details.sale_id).toBe(saleIdByTxn.get(d.txn));
    const [sales] = await query<{ n: string }>(db, `select count(*) as n from sale_events where processor_event_id like 'rel-${run}-%'`);
    const [commissions] = await query<{ n: string }>(db, `select count(*) as n from commissions c join sale_events s on s.id = c.sale_id where s.processor_event_id like 'rel-${run}-%'`);
    expect(Number(sales.n)).toBe(50);
    expect(Number(commissions.n)).toBe(50);
  });

  it('200 clicks from one address spread over both processes: exactly 60 accepted in the minute', async () => {
    const address = ip();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => postJson(`${servers[i % 2].url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1' }, { 'x-forwarded-for': address })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(60);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(140);
    for (const refused of answers.filter((a) => a.status === 429)) expect(refused.body.error.code).toBe('rate_limited');
  });
});
