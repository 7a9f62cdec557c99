/**
 * Recent rollup rows become settled ones (docs/analytics.md, "Recent and settled rows"). The stats
 * consumers add to `stats_rollups_recent`, whose rows PostgreSQL updates in place (HOT: no counter
 * is in an index); once a row's hour, day or month has ended, it is added to `stats_rollups`,
 * whose primary key includes the counters for index-only reads, and deleted from the recent
 * table — in one transaction, so the stats API (which reads both) never counts it twice or not
 * at all. A late event for an ended bucket (a sale recorded with an earlier payment time) makes a
 * recent row again, moved at the next pass.
 */
import type { Knex } from 'knex';
import { bucketOf, MONTH_SPAN } from './stats-buckets.js';
import { HOUR_MS, KEY_ORDER, onConflict, RECENT, ROLLUP_COUNTERS, SETTLED, SPANS } from './stats-rollups.js';
import { isSqlite } from './knex.js';
import { runStatement } from './statement.js';

const KEY = KEY_ORDER.join(', ');
const ALL = [...KEY_ORDER, ...ROLLUP_COUNTERS].join(', ');
const ENDED = `(span = 1 and bucket < ?) or (span = 24 and bucket < ?) or (span = ${MONTH_SPAN} and bucket < ?)`;

// SQLite: the transaction holds the file's write lock (no other writer meanwhile), so a copy and a
// delete with the same condition see the same rows.
const SQLITE_COPY = `insert into ${SETTLED} (${ALL}) select ${ALL} from ${RECENT} where ${ENDED} order by ${KEY} ${onConflict(SETTLED)}`;
const SQLITE_DELETE = `delete from ${RECENT} where ${ENDED}`;

// PostgreSQL: other processes' consumers add to recent rows meanwhile. The rows to move are locked
// first, in key order — the order every consumer locks rollup rows in, so the two never deadlock —
// and deleted; the statement adds exactly the deleted rows. A consumer that adds to a row being
// moved waits for this transaction, finds the row gone, and inserts a new recent row, which the
// next pass moves.
const PG_MOVE = `
  with ended as (
    select ${KEY} from ${RECENT} where ${ENDED} order by ${KEY} for update
  ), moved as (
    delete from ${RECENT} r using ended e
    where ${KEY_ORDER.map((c) => `r.${c} = e.${c}`).join(' and ')}
    returning r.*
  )
  insert into ${SETTLED} (${ALL}) select ${ALL} from moved order by ${KEY}
  ${onConflict(SETTLED)}`;

/**
 * Moves the recent rows whose bucket has ended at `now` into the settled rows, in one transaction
 * of its own. Returns how many rows moved.
 */
export async function settleEndedRollups(db: Knex, now: number): Promise<number> {
  // The hour, day and month still open at `now`: rows of buckets below them are settled.
  const hour = Math.floor(now / HOUR_MS);
  const bounds = SPANS.map((span) => bucketOf(span, hour));
  return db.transaction(async (trx) => {
    if (!isSqlite(trx)) return (await runStatement(trx, PG_MOVE, bounds)).changes;
    await runStatement(trx, SQLITE_COPY, bounds);
    return (await runStatement(trx, SQLITE_DELETE, bounds)).changes;
  });
}
