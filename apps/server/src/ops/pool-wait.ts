/**
 * How long queries wait for the database (docs/operator.md, "Metrics"): the pool's acquire time,
 * from knex's pool (tarn) events, and on SQLite the wait for the file's write lock. A pool that is
 * too small for the load shows here before it shows as latency of the routes.
 */
import type { Db } from '../db/knex.js';
import { CachingBetterSqlite3Client } from '../db/sqlite-client.js';
import type { Metrics } from './metrics.js';

interface PoolEvents {
  on(event: 'acquireRequest', listener: (eventId: number) => void): void;
  on(event: 'acquireSuccess' | 'acquireFail', listener: (eventId: number) => void): void;
  removeListener(event: string, listener: (...args: never[]) => void): void;
}

/** Starts observing; the function returned stops (the server's close()). */
export function watchPoolWaits(db: Db, metrics: Metrics): () => void {
  const pool = (db.client as { pool?: PoolEvents }).pool;
  const waiting = new Map<number, number>();
  const requested = (eventId: number): void => void waiting.set(eventId, performance.now());
  const ended = (outcome: 'acquired' | 'failed') => (eventId: number) => {
    const started = waiting.get(eventId);
    if (started === undefined) return;
    waiting.delete(eventId);
    metrics.poolAcquireSeconds.observe({ outcome }, (performance.now() - started) / 1000);
  };
  const acquired = ended('acquired');
  const failed = ended('failed');
  pool?.on('acquireRequest', requested);
  pool?.on('acquireSuccess', acquired);
  pool?.on('acquireFail', failed);
  const sqlite = db.client instanceof CachingBetterSqlite3Client ? db.client : undefined;
  const stopLockWatch = sqlite?.observeWriteLockWaits((seconds) => metrics.sqliteWriteLockSeconds.observe(seconds));
  return () => {
    pool?.removeListener('acquireRequest', requested);
    pool?.removeListener('acquireSuccess', acquired);
    pool?.removeListener('acquireFail', failed);
    stopLockWatch?.();
    waiting.clear();
  };
}
