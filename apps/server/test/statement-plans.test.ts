/**
 * Issue 25: on PostgreSQL the statements every lead and sale sends are prepared once per
 * connection, and after PostgreSQL's five trial plans the lead's and the sale's writes run on one
 * generic plan instead of being planned again on every call (docs/performance.md, "Plans made
 * once"). The program-key and link lookups are prepared too, as every fixed text of
 * db/statement.ts is (the outbox consumers' cursor statements among them, on the jobs' own pool,
 * not read here). Read from pg_prepared_statements on the server's only connection: a count, not
 * a timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
const RUNS = 8;

beforeAll(async () => {
  if (dbKind !== 'postgres') return;
  // One connection: the statements the test reads back are the ones the routes prepared on it.
  process.env.DATABASE_POOL_MAX = '1';
  try {
    s = await startTestServer();
  } finally {
    delete process.env.DATABASE_POOL_MAX;
  }
  await s.running.deps.outbox.stop();
});
afterAll(() => s?.close());

interface Prepared {
  name: string;
  statement: string;
  generic_plans: string | number;
  custom_plans: string | number;
}

async function prepared(): Promise<Prepared[]> {
  const result = (await s.db.raw('select name, statement, generic_plans, custom_plans from pg_prepared_statements')) as { rows: Prepared[] };
  return result.rows;
}

describe.skipIf(dbKind !== 'postgres')('[postgres] statements of the lead and sale routes are planned once', () => {
  it('the lead and sale writes run on a generic plan after the first five; the program-key and link lookups are prepared', async () => {
    for (let i = 0; i < RUNS; i++) {
      const key = `plan-${i}-${Date.now()}`;
      await serverLead(s, await click(s), key);
      const res = await sale(s, { transaction_id: `plan-${i}-${Date.now()}`, customer_key: key });
      expect(res.status, res.text).toBe(200);
    }
    const rows = await prepared();
    const byName = new Map(rows.map((r) => [r.name, r]));
    for (const name of ['reftrack_lead_write', 'reftrack_sale_write', 'reftrack_lead_read', 'reftrack_sale_read']) {
      const row = byName.get(name);
      expect(row, `${name} prepared`).toBeDefined();
      // Five custom plans are PostgreSQL's trial; every later run reused the generic plan.
      expect(Number(row!.custom_plans), name).toBe(5);
      expect(Number(row!.generic_plans), name).toBe(RUNS - 5);
    }
    const fixedTexts = [
      ['program-key lookup', /from program_keys where key_hash/],
      ['link lookup of the click', /from referral_links l left join partners/],
    ] as const;
    for (const [what, text] of fixedTexts) {
      const row = rows.find((r) => text.test(r.statement));
      expect(row, `${what} prepared`).toBeDefined();
      expect(row!.name).toMatch(/^reftrack_[0-9a-f]{24}$/);
    }
  });
});
