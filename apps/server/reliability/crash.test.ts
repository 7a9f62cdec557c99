/**
 * A server killed with SIGKILL in the middle of a sale load loses nothing it acknowledged: every
 * sale answered 200 is stored with its commission, and no sale lacks its commission or vice versa.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';
import { postgresUrl } from '../test/helpers/databases.js';

const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function crashUnderLoad(kind: 'sqlite' | 'postgres'): Promise<void> {
  const db: Database = await freshDatabase(kind);
  cleanups.push(() => db.drop());
  const { fixture, keys } = programsFixture(3);
  const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
  await seed(env, fixture);
  let server: ServerProcess = await spawnServer(env);
  cleanups.push(() => server.kill());
  for (let p = 0; p < 3; p++) {
    const click = await postJson(`${server.url}/api/v1/track/click`, { affiliate_url: `https://rel.test/?aff=p${p + 1}` }, { 'x-forwarded-for': `203.0.113.${p + 1}` });
    await postJson(`${server.url}/api/v1/track/lead`, { click_id: click.body.click_id, customer_key: `k${p}` }, { authorization: `Bearer ${keys[p]}`, 'x-forwarded-for': `203.0.113.${p + 1}` });
  }
  const acknowledged: string[] = [];
  let sent = 0;
  let killed = false;
  // 300 sales (100 per key, under the 120/min limit), 30 in flight; SIGKILL once 60 were answered.
  const worker = async (w: number) => {
    for (let i = w; i < 300 && !killed; i += 30) {
      const program = i % 3;
      const txn = `crash-${kind}-${i}`;
      sent++;
      try {
        const res = await postJson(`${server.url}/api/v1/track/sale`, { transaction_id: txn, amount_cents: 1000, customer_key: `k${program}` }, { authorization: `Bearer ${keys[program]}` });
        if (res.status === 200) acknowledged.push(txn);
      } catch {
        // the connection died with the process
      }
      if (acknowledged.length >= 60 && !killed) {
        killed = true;
        await server.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 30 }, (_, w) => worker(w)));
  expect(killed).toBe(true);
  expect(acknowledged.length).toBeGreaterThanOrEqual(60);
  expect(sent).toBeLessThan(300);

  server = await spawnServer(env);
  const stored = new Set((await query<{ processor_event_id: string }>(db, `select s.processor_event_id from sale_events s join commissions c on c.sale_id = s.id`)).map((r) => r.processor_event_id));
  for (const txn of acknowledged) expect(stored.has(txn), txn).toBe(true);
  const orphanSales = await query(db, `select s.id from sale_events s left join commissions c on c.sale_id = s.id where c.id is null and s.is_test = ${kind === 'sqlite' ? 0 : 'false'}`);
  const orphanCommissions = await query(db, `select c.id from commissions c left join sale_events s on s.id = c.sale_id where s.id is null`);
  expect(orphanSales).toEqual([]);
  expect(orphanCommissions).toEqual([]);
  // The restarted server serves, and a resend of an acknowledged sale is a duplicate.
  const resend = await postJson(`${server.url}/api/v1/track/sale`, { transaction_id: acknowledged[0], amount_cents: 1000, customer_key: 'k0' }, { authorization: `Bearer ${keys[0]}` });
  expect([409]).toContain(resend.status);
}

describe('SIGKILL during a sale load', () => {
  it('SQLite: every acknowledged sale survives with its commission', async () => {
    await crashUnderLoad('sqlite');
  });
  it('PostgreSQL: every acknowledged sale survives with its commission', async () => {
    if (!(await postgresUrl())) return;
    await crashUnderLoad('postgres');
  });
});
