/**
 * Leads, sales and refunds in the stats rollups (docs/analytics.md, "Rollups"): an outbox consumer.
 * Clicks are rolled up from their batches' events (jobs/stats-clicks.ts); conversions are rolled up here,
 * from the events the domain core wrote with them, in batches — not in the lead's or sale's own
 * transaction. There each one cost a read of its click and an upsert of up to 30 rollup rows that
 * every conversion of the program also locks (measured: ~0.43 ms per sale on SQLite, ~1.6 ms on
 * PostgreSQL, more than the rest of a lead), while a pass costs one read of their clicks and one
 * upsert of the rows they share. Counted once across processes, with the cursor in the same
 * transaction, or on SQLite in the last of the pass's parts (jobs/outbox-runner.ts); the stats trail
 * the write by one pass (about 0.1 s on the process that wrote it, at most a poll interval
 * elsewhere; on SQLite under load up to the stats thread's 2 s between passes, jobs/stats.worker.ts).
 *
 * What counts, as `stats rebuild` (ops/stats-rebuild.ts) counts it from the raw tables: a settled
 * lead at its settlement (a provisional one is not a lead yet, 3.1), a real sale at its payment time
 * in its currency, a refund at its recording; test traffic writes no events, and a test sale's
 * refund is skipped by its sale's flag.
 */
import type { Knex } from 'knex';
import type { DomainEvent, DomainEventType } from '@reftrack/contract';
import { preparedConsumer, type OutboxConsumer } from './outbox-runner.js';
import { inLists } from '../db/in-lists.js';
import { bool } from '../db/knex.js';
import type { StoredEvent } from '../db/outbox.js';
import { conversionSet, rollupWrites, type Conversion, type RollupSet } from '../db/stats-rollups.js';

export const STATS_CONVERSIONS_CONSUMER = 'stats-conversions';

const TYPES: DomainEventType[] = ['lead.created', 'lead.settled', 'sale.created', 'sale.refunded'];

/** The sales' test flags and their customers' click ids (the attributed click), in one read. */
async function salesOf(db: Knex | Knex.Transaction, ids: number[]): Promise<Map<number, { test: boolean; clickId: string | null }>> {
  const found = new Map<number, { test: boolean; clickId: string | null }>();
  // A pass of the stats thread reads up to thousands of events (jobs/stats.worker.ts).
  for (const list of inLists(ids, 1000)) {
    const rows = await db('sale_events as s').leftJoin('customers as c', 'c.id', 's.customer_id').whereIn('s.id', list).select('s.id', 's.is_test', 's.click_id', 'c.click_id as customer_click_id');
    for (const r of rows) found.set(Number(r.id), { test: bool(r.is_test), clickId: (r.customer_click_id ?? r.click_id ?? null) as string | null });
  }
  return found;
}

/** The rollup increments of a pass's leads, sales and refunds: reads only. */
async function conversionRollups(db: Knex | Knex.Transaction, events: StoredEvent[]): Promise<RollupSet> {
  const saleIds = [...new Set(events.flatMap(({ event }) => (event.type === 'sale.created' || event.type === 'sale.refunded' ? [(event.data as { sale: { id: number } }).sale.id] : [])))];
  const sales = await salesOf(db, saleIds);
  const conversions: Conversion[] = [];
  for (const { event } of events) {
    if (event.type === 'lead.created' || event.type === 'lead.settled') {
      const { lead } = event.data as DomainEvent<'lead.created'>['data'];
      if (lead.provisional || lead.settled_at === null) continue;
      conversions.push({ programId: lead.program_id, partnerId: lead.partner_id, clickId: lead.click_id, at: Date.parse(lead.settled_at), currency: '', counters: { leads: 1 } });
    } else if (event.type === 'sale.created') {
      const { sale } = event.data as DomainEvent<'sale.created'>['data'];
      const facts = sales.get(sale.id);
      if (!facts || facts.test) continue;
      conversions.push({ programId: sale.program_id, partnerId: sale.partner_id, clickId: facts.clickId, at: Date.parse(sale.occurred_at), currency: sale.currency, counters: { sales: 1, revenue_cents: sale.amount_cents } });
    } else if (event.type === 'sale.refunded') {
      const { sale, refund } = event.data as DomainEvent<'sale.refunded'>['data'];
      const facts = sales.get(sale.id);
      if (!facts || facts.test) continue;
      conversions.push({ programId: sale.program_id, partnerId: sale.partner_id, clickId: facts.clickId, at: Date.parse(refund.created_at), currency: sale.currency, counters: { refunds: 1, refunded_cents: refund.amount_cents } });
    }
  }
  return conversionSet(db, conversions);
}

export const statsConversionsConsumer: OutboxConsumer = preparedConsumer({
  name: STATS_CONVERSIONS_CONSUMER,
  types: TYPES,
  // The reads of the sales and clicks, and the sums, are done before the pass's write transaction
  // on SQLite (outbox-runner.ts, preparedPass): the rows they read are never changed once written.
  async prepare(db, events) {
    return rollupWrites(db, await conversionRollups(db, events));
  },
});
