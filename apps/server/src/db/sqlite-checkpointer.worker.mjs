// @ts-check
/**
 * The WAL checkpointer thread (SQLite), started by the click writer thread: copies the WAL into
 * the database file on a connection and thread of its own, so that neither the writer thread nor
 * the event loop runs a checkpoint inside a commit (SQLite's automatic checkpoint, which the
 * committing connection runs every 1,000 pages, held the click lane's batches behind it:
 * docs/performance.md, "The click lane's tail").
 *
 * Every INTERVAL_MS a PASSIVE checkpoint: it copies what it can without waiting for the writer or
 * a reader, and the writer goes on appending meanwhile; when that left more than REWIND_FRAMES
 * behind, the rest is copied holding the write lock, so that the WAL is rewound. A reader that
 * keeps an old snapshot can still stop the rewind, so the WAL is also bounded: once its file is
 * larger than `walLimitBytes`, the thread takes the write lock shared with the writer thread and
 * the event loop (sqlite-write-lock.ts), runs a TRUNCATE checkpoint (waiting a moment for readers)
 * and gives the lock back.
 *
 * Protocol: { close: true } stops the timer and closes the connection. With `trace`, each
 * checkpoint's duration and the WAL's frames go to stderr (the bench's diagnosis,
 * REFTRACK_TRACE_CHECKPOINTS=1).
 */
import { parentPort, workerData } from 'node:worker_threads';
import fs from 'node:fs';
import Database from 'better-sqlite3';

const LOCK_FREE = 0;
const LOCK_CHECKPOINTER = 3;
const INTERVAL_MS = 50;
/**
 * How long a TRUNCATE checkpoint waits for readers to leave the WAL, holding the write lock; when
 * they have not, the next attempt waits for TRUNCATE_RETRY_MS (the passive checkpoints go on), so
 * a long read cannot hold the writers back for more than this at a time.
 */
const TRUNCATE_WAIT_MS = 100;
const TRUNCATE_RETRY_MS = 1000;
/**
 * SQLite rewinds the WAL to its start when a transaction begins after a checkpoint copied every
 * frame. A pass beside a busy writer rarely ends with nothing left to copy (the writer appended
 * meanwhile), so the WAL would grow pass after pass (measured: to 15,000 frames, 62 MB, within a
 * 10 s click run). Past this many frames the pass finishes under the write lock. Below SQLite's
 * automatic checkpoint (1,000 frames), which the event loop's connection still has.
 */
const REWIND_FRAMES = 500;

/** @type {{ filename: string, lock: SharedArrayBuffer, walLimitBytes: number, trace: boolean }} */
const { filename, lock, walLimitBytes, trace } = workerData;
const word = new Int32Array(lock);

const db = new Database(filename);
db.pragma(`busy_timeout = ${TRUNCATE_WAIT_MS}`);

function walBytes() {
  try {
    return fs.statSync(`${filename}-wal`).size;
  } catch {
    return 0; // no WAL file yet, or it was just removed by the last connection's close
  }
}

/** @param {'PASSIVE' | 'TRUNCATE'} mode @returns {{ busy: number, log: number, checkpointed: number }} */
function checkpoint(mode) {
  const [row] = /** @type {Array<{ busy: number, log: number, checkpointed: number }>} */ (db.pragma(`wal_checkpoint(${mode})`));
  return row;
}

/**
 * Runs `fn` holding the write lock shared with the writer thread and the event loop: a TRUNCATE
 * checkpoint must have no writer beside it, and one that met SQLite's lock instead would wait in
 * SQLite's busy handler, which sleeps the event loop.
 * @template T @param {() => T} fn @returns {T}
 */
function withWriteLock(fn) {
  for (let holder; (holder = Atomics.compareExchange(word, 0, LOCK_FREE, LOCK_CHECKPOINTER)) !== LOCK_FREE; ) Atomics.wait(word, 0, holder);
  try {
    return fn();
  } finally {
    Atomics.store(word, 0, LOCK_FREE);
    Atomics.notify(word, 0);
  }
}

let truncateAfter = 0;

function pass() {
  const t0 = performance.now();
  let done = checkpoint('PASSIVE');
  let how = 'passive';
  const t1 = performance.now();
  // The file, not the frames in use: SQLite rewinds the WAL without shrinking it, and the file is
  // what takes the disk.
  if (walBytes() > walLimitBytes && performance.now() >= truncateAfter) {
    done = withWriteLock(() => checkpoint('TRUNCATE'));
    how = 'truncate';
    if (done.busy) truncateAfter = performance.now() + TRUNCATE_RETRY_MS;
  } else if (done.log > REWIND_FRAMES) {
    // Frames the writer appended while the pass copied: finished with no writer beside it, so the
    // next transaction rewinds the WAL. Most of the copying is done by then; the lock is held for
    // the rest.
    done = withWriteLock(() => checkpoint('PASSIVE'));
    how = 'catch-up';
  }
  if (trace) process.stderr.write(`checkpoint ${Date.now()} ${how} ${(t1 - t0).toFixed(1)} ms + locked ${how === 'passive' ? 0 : (performance.now() - t1).toFixed(1)} ms log ${done.log} copied ${done.checkpointed} busy ${done.busy} file ${walBytes()}\n`);
}

const timer = setInterval(() => {
  try {
    pass();
  } catch (err) {
    // A busy or locked database is retried at the next pass; anything else ends the thread, and
    // the writer thread's own checkpoint takes over (its `exit` handler).
    const code = /** @type {{ code?: string }} */ (err)?.code;
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw err;
  }
}, INTERVAL_MS);

const port = parentPort;
if (!port) throw new Error('sqlite-checkpointer.worker.mjs runs as a worker thread');
port.on('message', (/** @type {{ close: true }} */ message) => {
  if (!('close' in message)) return;
  clearInterval(timer);
  db.close();
  port.close();
});
