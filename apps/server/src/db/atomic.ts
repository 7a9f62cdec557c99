/**
 * One atomic unit of work per request. On PostgreSQL it is a transaction of its own (concurrent
 * units run on separate connections). On SQLite, where one connection writes at a time and every
 * commit appends the touched pages to the WAL, concurrent units are group-committed: each runs in
 * a savepoint of a shared transaction, a failing unit rolls back only its savepoint, and every
 * caller is answered after the shared commit — so an acknowledged write is never lost, and a
 * failed commit fails every unit in it and leaves nothing behind.
 */
import type { Knex } from 'knex';
import { isSqlite, type Db } from './knex.js';
import { inSavepoint } from './savepoint.js';
import { bufferEvents, flushBufferedEvents } from './outbox.js';

export type Work<T> = (trx: Knex.Transaction) => Promise<T>;
export type Atomic = <T>(work: Work<T>) => Promise<T>;

interface Unit {
  work: Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

const MAX_UNITS = 100;

/**
 * `afterCommit` runs after each commit that held at least one unit (the outbox runner is poked
 * there, so events written by a request are handled without waiting for the next poll).
 */
export function createAtomic(db: Db, afterCommit: () => void = () => undefined): Atomic {
  if (!isSqlite(db)) {
    return async (work) => {
      const value = await db.transaction(work);
      afterCommit();
      return value;
    };
  }
  let queue: Unit[] = [];
  let running = false;

  async function flush(): Promise<void> {
    running = true;
    while (queue.length > 0) {
      const units = queue.slice(0, MAX_UNITS);
      queue = queue.slice(units.length);
      const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
      try {
        await db.transaction(async (trx) => {
          // The units' domain events are written in one statement before the commit (db/outbox.ts).
          bufferEvents(trx);
          for (const unit of units) {
            try {
              outcomes.push({ ok: true, value: await inSavepoint(trx, unit.work) });
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
          await flushBufferedEvents(trx);
        });
      } catch (commitError) {
        for (const unit of units) unit.reject(commitError);
        continue;
      }
      afterCommit();
      units.forEach((unit, i) => {
        const outcome = outcomes[i];
        if (outcome.ok) unit.resolve(outcome.value);
        else unit.reject(outcome.error);
      });
    }
    running = false;
  }

  return <T>(work: Work<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!running) {
        running = true;
        // One turn of the event loop lets concurrent requests join this group.
        setImmediate(() => void flush());
      }
    });
}
