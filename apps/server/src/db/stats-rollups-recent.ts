/**
 * Recent rollup hours become settled rows (docs/analytics.md, "Recent and settled rows"). The stats
 * consumers add hourly rows to `stats_rollups_recent`, whose rows PostgreSQL updates in place (HOT:
 * no counter is in an index); once an hour has ended, its row is added to its hour's, its UTC day's
 * and its UTC month's rows in `stats_rollups`, whose primary key includes the counters for
 * index-only reads, and deleted from the recent table — in one transaction, so the stats API (which
 * reads both, a recent hour as its day and month as well) never counts it twice or not at all. A
 * settled day or month row may so hold only the day's or month's hours that have ended. A late
 * event for an ended hour (a sale recorded with an earlier payment time) makes a recent row again,
 * moved at the next pass.
 *
 * Recent rows of a day or month (written by a server of the release before, which kept all three
 * spans recent) are added to the settled row of their key as they are, whenever found.
 */
import type { Knex } from 'knex';
import { hoursAs, HOUR_MS, KEY_ORDER, onConflict, RECENT, ROLLUP_COUNTERS, SETTLED } from './stats-rollups.js';
import { isSqlite } from './knex.js';
import { MONTH_SPAN } from './stats-buckets.js';
import { runStatement } from './statement.js';

const KEY = KEY_ORDER.join(', ');
const ALL = [...KEY_ORDER, ...ROLLUP_COUNTERS].join(', ');
/** The rows to move: ended hours, and any day or month row (a release before's). */
const TO_MOVE = `(span = 1 and bucket < ?) or span <> 1`;
/** The moved rows `from` as settled increments: each as it is, and each hour as its day and month, summed per key. */
function spread(db: Knex | Knex.Transaction, from: string): string {
  const hours = [hoursAs(db, from, 24), hoursAs(db, from, MONTH_SPAN)];
  // PostgreSQL sums int8 as numeric; SQLite reads the cast as its integer type.
  const sums = ROLLUP_COUNTERS.map((c) => `cast(sum(${c}) as int8)`).join(', ');
  // `where true`: SQLite's grammar needs a WHERE before ON CONFLICT in an INSERT … SELECT.
  return `select ${KEY}, ${sums} from (select ${ALL} from ${from} union all ${hours.join(' union all ')}) as spread where true group by ${KEY} order by ${KEY}`;
}

// SQLite: the transaction holds the file's write lock (no other writer meanwhile), so a copy and a
// delete with the same condition see the same rows.
const sqliteCopy = (db: Knex | Knex.Transaction): string => `with moved as (select ${ALL} from ${RECENT} where ${TO_MOVE}) insert into ${SETTLED} (${ALL}) ${spread(db, 'moved')} ${onConflict(SETTLED)}`;
const SQLITE_DELETE = `delete from ${RECENT} where ${TO_MOVE}`;

// PostgreSQL: other processes' consumers add to recent rows meanwhile. The rows to move are locked
// first, in key order — the order every consumer locks rollup rows in, so the two never deadlock —
// and deleted; the statement adds exactly the deleted rows. A consumer that adds to a row being
// moved waits for this transaction, finds the row gone, and inserts a new recent row, which the
// next pass moves.
const pgMove = (db: Knex | Knex.Transaction): string => `
  with ended as (
    select ${KEY} from ${RECENT} where ${TO_MOVE} order by ${KEY} for update
  ), moved as (
    delete from ${RECENT} r using ended e
    where ${KEY_ORDER.map((c) => `r.${c} = e.${c}`).join(' and ')}
    returning r.*
  )
  insert into ${SETTLED} (${ALL}) ${spread(db, 'moved')}
  ${onConflict(SETTLED)}`;

/**
 * Moves the recent hours that have ended at `now` into the settled rows of their hour, day and
 * month, in one transaction of its own.
 */
export async function settleEndedRollups(db: Knex, now: number): Promise<void> {
  // The hour still open at `now`: rows of hours below it are settled.
  const hour = Math.floor(now / HOUR_MS);
  await db.transaction(async (trx) => {
    if (isSqlite(trx)) {
      await runStatement(trx, sqliteCopy(trx), [hour]);
      await runStatement(trx, SQLITE_DELETE, [hour]);
    } else {
      await runStatement(trx, pgMove(trx), [hour]);
    }
  });
}
