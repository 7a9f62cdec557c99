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
 * Layout of the shared Int32Array: [0] the holder (FREE, EVENT_LOOP, WRITER_THREAD, or 3: the WAL
 * checkpointer thread during a TRUNCATE checkpoint, sqlite-checkpointer.worker.mjs); [1] set
 * while the event loop waits, so that the writer thread lets it go first between two batches.
 */
// Node 20 has Atomics.waitAsync; TypeScript declares it only from lib es2024, which would also
// admit APIs Node 20 lacks.
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: boolean; value: Promise<string> | string } }).waitAsync;

const LOCK_FREE = 0;
const LOCK_EVENT_LOOP = 1;
const LOCK_WRITER_THREAD = 2;

export class SqliteWriteLock {
  readonly buffer: SharedArrayBuffer;
  private readonly word: Int32Array;

  constructor() {
    this.buffer = new SharedArrayBuffer(8);
    this.word = new Int32Array(this.buffer);
  }

  /** Resolves once the caller holds the lock; the caller must `release()` it exactly once. */
  async acquire(): Promise<void> {
    for (;;) {
      if (Atomics.compareExchange(this.word, 0, LOCK_FREE, LOCK_EVENT_LOOP) === LOCK_FREE) {
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

  /** A writer thread that died holding the lock cannot release it (SQLite rolled its batch back). */
  releaseDeadWriterThread(): void {
    if (Atomics.compareExchange(this.word, 0, LOCK_WRITER_THREAD, LOCK_FREE) === LOCK_WRITER_THREAD) Atomics.notify(this.word, 0);
  }
}

const locks = new Map<string, SqliteWriteLock>();

/** The lock of one database file, shared by every connection of this process to it. */
export function writeLockFor(filename: string): SqliteWriteLock {
  let lock = locks.get(filename);
  if (!lock) locks.set(filename, (lock = new SqliteWriteLock()));
  return lock;
}
