/**
 * Issue 25: on PostgreSQL a lead and a sale over HTTP take two round trips each (one read, one
 * write statement), counted by the server's debug counter (db/round-trips.ts). A count, not a timing.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale } from './helpers/flows.js';

let s: TestServer;
const lines: Array<{ msg: string; path: string; status: number; roundTrips: number }> = [];

beforeAll(async () => {
  if (dbKind !== 'postgres') return;
  process.env.REFTRACK_COUNT_ROUND_TRIPS = '1';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  try {
    s = await startTestServer({ logger: pino({ level: 'info' }, sink) });
  } finally {
    delete process.env.REFTRACK_COUNT_ROUND_TRIPS;
  }
  // Passes of the outbox a request pokes would run in its async context and be counted with it.
  await s.running.deps.outbox.stop();
});
afterAll(() => s?.close());

let n = 0;

/** The statements each call sent. The program key is cached for half a second, so the fewest of several calls is the route's own. */
async function roundTrips(call: () => Promise<{ status: number; text: string }>): Promise<number[]> {
  const counts: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = lines.length;
    const res = await call();
    expect(res.status, res.text).toBe(200);
    const line = lines.slice(before).find((l) => l.msg === 'round trips');
    counts.push(line!.roundTrips);
  }
  return counts;
}

describe.skipIf(dbKind !== 'postgres')('[postgres] round trips of the lead and sale routes', () => {
  it('a lead is one read and one write; a sale too', async () => {
    const customers: Array<{ clickId: string; key: string }> = [];
    for (let i = 0; i < 5; i++) customers.push({ clickId: await click(s), key: `rt-${++n}` });
    let j = 0;
    const leads = await roundTrips(() => s.post('/api/v1/track/lead', { click_id: customers[j].clickId, customer_key: customers[j++].key }, bearer(KEY1)));
    expect(Math.min(...leads), leads.join()).toBeLessThanOrEqual(2);
    // At most the key's lookup besides (when its cache entry had expired).
    expect(Math.max(...leads), leads.join()).toBeLessThanOrEqual(3);

    let i = 0;
    const sales = await roundTrips(() => sale(s, { transaction_id: `rt-${Date.now()}-${++n}`, customer_key: customers[i++].key }, KEY1));
    expect(Math.min(...sales), sales.join()).toBeLessThanOrEqual(2);
    expect(Math.max(...sales), sales.join()).toBeLessThanOrEqual(3);

    // The writes all happened: each lead moved its customer and wrote its event; each sale paid its commission.
    const keys = customers.slice(0, 5).map((c) => c.key);
    expect(await s.db('customers').whereIn('customer_key', keys).whereNotNull('converted_at').count({ n: '*' }).first()).toEqual({ n: 5 });
    const sold = await s.db('sale_events as s').join('customers as c', 'c.id', 's.customer_id').join('commissions as m', 'm.sale_id', 's.id').join('platform_fees as f', 'f.commission_id', 'm.id').whereIn('c.customer_key', keys).count({ n: '*' }).first();
    expect(sold).toEqual({ n: 5 });
    const types = await s.db('outbox_events').whereIn('type', ['lead.created', 'sale.created', 'commission.created']).select('type');
    expect(types.filter((t) => t.type === 'lead.created')).toHaveLength(5);
    expect(types.filter((t) => t.type === 'sale.created')).toHaveLength(5);
    expect(types.filter((t) => t.type === 'commission.created')).toHaveLength(5);
  });

  it('a program key read more than half a second ago is not read again while the server hears key changes', async () => {
    const customers: Array<{ clickId: string; key: string }> = [];
    for (let i = 0; i < 4; i++) customers.push({ clickId: await click(s), key: `rt-${++n}` });
    const counts: number[] = [];
    for (const c of customers) {
      const before = lines.length;
      const res = await s.post('/api/v1/track/lead', { click_id: c.clickId, customer_key: c.key }, bearer(KEY1));
      expect(res.status, res.text).toBe(200);
      counts.push(lines.slice(before).find((l) => l.msg === 'round trips')!.roundTrips);
      // Past the half second every key is otherwise kept for.
      await new Promise((r) => setTimeout(r, 700));
    }
    // The first leads may have read the key (the watch vouches from its first ping heard on); the
    // last two were the route's two statements alone, each more than half a second after the one before.
    expect(counts.slice(2), counts.join()).toEqual([2, 2]);
  });
});
