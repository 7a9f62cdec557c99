/**
 * Clicks in the stats rollups (docs/analytics.md, "Rollups"): an outbox consumer. Each click batch
 * writes, in its own transaction, one `clicks.recorded` event per program carrying its clicks
 * summed per link, UTC hour and dimensions (db/click-batcher.ts); a pass here adds a pass's worth
 * of batches to the rollups in one upsert. Written by the batch itself, the same rows cost the
 * click lane about a tenth of its rate (docs/performance.md): a hot program's ~30 rollup rows were
 * upserted once per batch of a few dozen clicks, here once per pass of many batches (up to 200 on
 * PostgreSQL, up to 20,000 on SQLite: jobs/stats.worker.ts).
 *
 * Counted once across processes, with the cursor in the same transaction (jobs/outbox-runner.ts).
 * The stats trail the click by one poll of the outbox (about a second). Version 1 events carry no
 * rollups: they were written by a server of the release before, whose batches rolled their clicks
 * up themselves, and are skipped.
 */
import type { DomainEvent } from '@reftrack/contract';
import { preparedConsumer, type OutboxConsumer } from './outbox-runner.js';
import type { StoredEvent } from '../db/outbox.js';
import { RollupSet, rollupWrites } from '../db/stats-rollups.js';

export const STATS_CLICKS_CONSUMER = 'stats-clicks';

/** The rollup increments of a pass's `clicks.recorded` events. */
function clickRollups(events: StoredEvent[]): RollupSet {
  const set = new RollupSet();
  for (const { event } of events) {
    if (event.type !== 'clicks.recorded' || event.version < 2) continue;
    const { program_id: programId, rollups } = event.data as DomainEvent<'clicks.recorded'>['data'];
    // An event without its sums (never written by the click batch) is skipped, not retried forever.
    if (!Array.isArray(rollups)) continue;
    for (const r of rollups) {
      set.add({
        programId,
        partnerId: r.partner_id,
        linkId: r.link_id,
        dims: r.dims,
        currency: '',
        at: Date.parse(r.hour),
        counters: r.dims === null ? { bot_clicks: r.bot_clicks } : { clicks: r.clicks, unique_clicks: r.unique_clicks },
      });
    }
  }
  return set;
}

export const statsClicksConsumer: OutboxConsumer = preparedConsumer({
  name: STATS_CLICKS_CONSUMER,
  types: ['clicks.recorded'],
  // The sums are made before the pass's write transaction on SQLite (outbox-runner.ts, preparedPass).
  async prepare(db, events) {
    return rollupWrites(db, clickRollups(events));
  },
});
