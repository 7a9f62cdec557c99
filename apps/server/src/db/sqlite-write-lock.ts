/**
 * One SQLite writer at a time between the event loop and the click writer thread
 * (`sqlite-click-writer.worker.mjs`), held for a whole write transaction.
 *
 * SQLite's own lock would do the same, but its busy handler sleeps synchronously: the event loop
 * would stall whenever the writer thread commits a batch. Worse, a deferred transaction that read
 * before the writer thread committed fails at its first write (SQLITE_BUSY_SNAPSHOT) whatever the
 * timeout. So both sides take this lock first: the event loop waits for it asynchronously, the
 * writer thread with `Atomics.wait` (blocking there costs nothing). SQLite's busy timeout stays as
 * the guard against other processes (an operator command run beside the server).
 *
 * Layout of the shared Int32Array: [0] the holder (FREE, EVENT_LOOP, WRITER_THREAD, 3: the WAL
 * checkpointer thread during a TRUNCATE checkpoint, sqlite-checkpointer.worker.mjs, or
 * STATS_THREAD: the stats thread's connection, jobs/stats.worker.ts); [1] set while the event loop
 * (or the stats thread) waits, so that the writer thread lets it go first between two batches.
 */
// Node 20 has Atomics.waitAsync; TypeScript declares it only from lib es2024, which would also
// admit APIs Node 20 lacks.
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

const LOCK_FREE = 0;
const LOCK_EVENT_LOOP = 1;
const LOCK_WRITER_THREAD = 2;
/** The stats thread's holder value: its own, so that a thread that died holding the lock can be told apart. */
export const LOCK_STATS_THREAD = 4;

export class SqliteWriteLock {
  readonly buffer: SharedArrayBuffer;
  private readonly word: Int32Array;

  /** A new lock, or (in another thread) the lock whose buffer the thread was given, taken as `holder`. */
  constructor(
    buffer: SharedArrayBuffer = new SharedArrayBuffer(8),
    private readonly holder: number = LOCK_EVENT_LOOP,
  ) {
    this.buffer = buffer;
    this.word = new Int32Array(this.buffer);
  }

  /** Resolves once the caller holds the lock; the caller must `release()` it exactly once. */
  async acquire(): Promise<void> {
    for (;;) {
      if (Atomics.compareExchange(this.word, 0, LOCK_FREE, this.holder) === LOCK_FREE) {
        Atomics.store(this.word, 1, 0);
        return;
      }
      Atomics.store(this.word, 1, 1);
      // The holder may be the writer thread or another connection of this process; either
      // notifies on release.
      const holder = Atomics.load(this.word, 0);
      if (holder === LOCK_FREE) continue;
      const waiting = waitAsync(this.word, 0, holder);
      if (waiting.async) await waiting.value;
    }
  }

  release(): void {
    Atomics.store(this.word, 0, LOCK_FREE);
    Atomics.notify(this.word, 0);
  }

  /**
   * Between two transactions of one long job (a chunked outbox pass): while a writer waits for the
   * lock and it is free, waits (up to `maxMs`) for that writer to take it. Without this, the job's
   * next transaction could take the lock back before a waiting event loop had run its wake-up, and
   * a request would wait out the whole job instead of one part of it.
   */
  async yieldToWaiting(maxMs: number): Promise<void> {
    const deadline = Date.now() + maxMs;
    while (Atomics.load(this.word, 1) === 1 && Atomics.load(this.word, 0) === LOCK_FREE && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** A writer thread that died holding the lock cannot release it (SQLite rolled its batch back). */
  releaseDeadWriterThread(): void {
    this.releaseDeadHolder(LOCK_WRITER_THREAD);
  }

  /** The same for any thread that holds the lock under its own holder value (the stats thread). */
  releaseDeadHolder(holder: number): void {
    if (Atomics.compareExchange(this.word, 0, holder, LOCK_FREE) === holder) Atomics.notify(this.word, 0);
  }
}

const locks = new Map<string, SqliteWriteLock>();

/**
 * In a thread other than the event loop's (the stats thread): the connections of this thread to
 * `filename` take the lock whose buffer the event loop gave it, as `holder`.
 */
export function adoptWriteLock(filename: string, buffer: SharedArrayBuffer, holder: number): void {
  locks.set(filename, new SqliteWriteLock(buffer, holder));
}

/** How long a long job's next transaction waits at most for a waiting writer to take the lock first. */
const YIELD_MAX_MS = 5;

/** The same, from a Knex instance: only a SQLite connection names a file (nothing to do for PostgreSQL). */
export async function yieldWriteLock(db: { client: unknown }): Promise<void> {
  const filename = (db.client as { connectionSettings?: { filename?: unknown } }).connectionSettings?.filename;
  if (typeof filename === 'string') await writeLockFor(filename).yieldToWaiting(YIELD_MAX_MS);
}

/** The lock of one database file, shared by every connection of this process to it. */
export function writeLockFor(filename: string): SqliteWriteLock {
  let lock = locks.get(filename);
  if (!lock) locks.set(filename, (lock = new SqliteWriteLock()));
  return lock;
}
