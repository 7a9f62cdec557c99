/**
 * A savepoint inside an open transaction, on the transaction's own connection. Knex's nested
 * `trx.transaction()` builds a new transaction object per savepoint and names each savepoint
 * afresh; on SQLite, where every lead and sale runs in a savepoint of a shared group transaction,
 * that was one of the largest costs of the request, and the one-off names kept the statements
 * from being prepared once. Here a savepoint is named after its depth, so the same few statements
 * repeat and stay prepared (sqlite-client.ts caches statements by their text). Use this, not
 * `trx.transaction()`, for a savepoint.
 */
import type { Knex } from 'knex';
import { isSqlite } from './knex.js';
import { bufferedEventCount, dropBufferedEvents } from './outbox.js';
import { runStatement } from './statement.js';

const depths = new WeakMap<Knex.Transaction, number>();

/**
 * SQLite runs every lead and sale in a savepoint of the group transaction (db/atomic.ts): its
 * savepoint statements go as fixed texts (db/statement.ts), without `raw()`'s building per call —
 * 3 against 8.5 µs a savepoint and its release here. PostgreSQL keeps `raw()`: its savepoints are
 * in the Stripe intake's and the synthetic chains' units only, and those texts would each take a
 * prepared statement's name.
 */
function savepointStatement(trx: Knex.Transaction, sql: string): Promise<unknown> {
  return isSqlite(trx) ? runStatement(trx, sql, []) : trx.raw(sql);
}

/**
 * Runs `work` in a savepoint of `trx`: a rejection rolls back only what `work` wrote, and is
 * rethrown. Savepoints of one transaction nest; `work` must not start a sibling savepoint
 * concurrently on the same transaction (units of work run one after another).
 */
export async function inSavepoint<T>(trx: Knex.Transaction, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const depth = (depths.get(trx) ?? 0) + 1;
  depths.set(trx, depth);
  const name = `reftrack_sp${depth}`;
  try {
    await savepointStatement(trx, `savepoint ${name}`);
    const events = bufferedEventCount(trx);
    let value: T;
    try {
      value = await work(trx);
    } catch (err) {
      dropBufferedEvents(trx, events);
      await savepointStatement(trx, `rollback to savepoint ${name}`);
      await savepointStatement(trx, `release savepoint ${name}`);
      throw err;
    }
    await savepointStatement(trx, `release savepoint ${name}`);
    return value;
  } finally {
    depths.set(trx, depth - 1);
  }
}
