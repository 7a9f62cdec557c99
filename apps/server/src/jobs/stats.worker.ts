/**
 * The stats thread (jobs/stats-thread.ts starts it): an outbox runner of its own, with a database
 * connection of its own, for the consumers that fill the stats rollups (STATS_CONSUMERS). Its
 * passes are the same as the event loop's (jobs/outbox-runner.ts): the cursor moves in the
 * transaction that writes the rollups, so a thread that dies mid-pass rolls both back and the next
 * thread handles the same events again.
 *
 * It also adds the ended hours' rollup rows of the recent table to the settled rows of their hour,
 * day and month, once a minute (stats-settler.ts).
 *
 * Messages from the event loop: `poke` (events committed), `clicks` (a click batch committed),
 * `drain` (handle everything committed so far, then answer), `stop`. To it: `log` lines (the
 * server's logger is the event loop's), `drained`, `stopped`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { DatabaseConfig } from '../config.js';
import { createDb } from '../db/knex.js';
import { adoptWriteLock, LOCK_STATS_THREAD } from '../db/sqlite-write-lock.js';
import { errorForLog } from '../logger.js';
import { STATS_CONSUMERS } from './consumers.js';
import { OutboxRunner, type RunnerLog } from './outbox-runner.js';
import { RollupSettler } from './stats-settler.js';

export interface StatsThreadData {
  database: DatabaseConfig;
  /** SQLite: the file's write lock, shared with the event loop and the click writer thread. */
  writeLock?: SharedArrayBuffer;
}

export type ToStatsThread = { type: 'poke' } | { type: 'clicks' } | { type: 'drain'; id: number; waitMs?: number } | { type: 'stop' };
export type FromStatsThread = { type: 'log'; level: 'warn' | 'error'; obj: Record<string, unknown>; msg: string } | { type: 'drained'; id: number } | { type: 'stopped' };

const port = parentPort;
if (!port) throw new Error('stats.worker runs as a worker thread (jobs/stats-thread.ts)');
const data = workerData as StatsThreadData;
const send = (message: FromStatsThread): void => port.postMessage(message);

if (data.database.client === 'sqlite' && data.writeLock) adoptWriteLock(data.database.filename, data.writeLock, LOCK_STATS_THREAD);
// PostgreSQL: one connection for the passes (they never overlap), one for the settler's moves, one
// for `drain`'s checks.
const db = createDb(data.database.client === 'postgres' ? { ...data.database, poolMax: 3 } : data.database);

const log: RunnerLog = {
  // Errors cross the thread as what the logger would keep of them (logger.ts, errorForLog).
  warn: (obj, msg) => send({ type: 'log', level: 'warn', obj: Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, errorForLog(v)])), msg }),
};

/**
 * SQLite under load: rounds at most every STATS_GAP_MS, passes of up to STATS_BATCH events. The
 * rollup rows of a pass are its events' keys summed, and a busy server's events share keys over
 * seconds, not over the 100 ms of the runner's default rounds: with 2,000 programs taking leads in
 * turn, a pass of 200 wrote 27 rows a lead, a pass of two seconds' leads a fifth of that — and a
 * third of that again since the recent rows are hours only (docs/performance.md, "Longer stats
 * passes", "Recent rows are hours"). Under BUSY_EVENTS_PER_SECOND the thread keeps the
 * default 100 ms, so a quiet or moderately busy server's stats trail by a tenth of a second. The
 * pass is written a few thousand rows per transaction (outbox-runner.ts, chunked passes), so the
 * file's write lock is never held for long. PostgreSQL keeps the runner's defaults: its pass is one
 * transaction, and a long one would hold back every consumer's view of the outbox
 * (readEventsAfter); at its rates a second holds too few events to share rows anyway.
 */
const STATS_BATCH = 20_000;
const STATS_GAP_MS = 2000;
const BUSY_EVENTS_PER_SECOND = 1000;
const runner = new OutboxRunner({ db, now: Date.now, logger: log }, STATS_CONSUMERS, data.database.client === 'sqlite' ? { batch: STATS_BATCH, busy: { eventsPerSecond: BUSY_EVENTS_PER_SECOND, gapMs: STATS_GAP_MS } } : {});
const settler = new RollupSettler(db, log);

port.on('message', (message: ToStatsThread) => {
  switch (message.type) {
    case 'poke':
      runner.poke();
      break;
    case 'clicks':
      runner.clicksCommitted();
      break;
    case 'drain':
      void runner.drain(message.waitMs).then(() => send({ type: 'drained', id: message.id }));
      break;
    case 'stop':
      void Promise.all([runner.stop(), settler.stop()])
        .then(() => db.destroy())
        .catch((err: unknown) => send({ type: 'log', level: 'error', obj: { err: errorForLog(err) }, msg: 'stats thread: closing its database connection failed' }))
        .finally(() => {
          send({ type: 'stopped' });
          port.close();
        });
      break;
  }
});

runner.start();
settler.start();
