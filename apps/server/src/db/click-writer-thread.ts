/**
 * On SQLite, click batches are committed by a writer thread with a connection of its own, so the
 * event loop spends no time in inserts, commits and WAL checkpoints. One thread per server process:
 * sqlite-click-writer.worker.mjs, which takes turns with the event loop's connection through the
 * file's write lock. (PostgreSQL's batches are one function call each, written from the event
 * loop: postgres-click-writer.ts.)
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CLICK_EVENT_COLUMNS, CLICK_OUTBOX_COLUMNS, CUSTOMER_COLUMNS, type BatchRows, type BatchWriter } from './click-rows.js';
import { writeLockFor } from './sqlite-write-lock.js';

/** From the sources the thread is a sibling of this module; in dist, tsup puts it beside the chunk. */
function workerFile(name: string): string {
  const candidates = [`./${name}.mjs`, `./${name}.js`].map((f) => fileURLToPath(new URL(f, import.meta.url)));
  const found = candidates.find((f) => fs.existsSync(f));
  if (!found) throw new Error(`click writer thread not found (looked for ${candidates.join(', ')})`);
  return found;
}

interface Reply {
  id: number;
  error?: { message: string; code?: string };
}

/** A failure reported by the writer thread, with SQLite's error code when it had one. */
class ClickWriteError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ClickWriteError';
  }
}

interface ThreadOptions {
  /** The worker's file name without extension. */
  name: string;
  workerData: Record<string, unknown>;
  maxInFlight: number;
  /** Runs when the thread is gone, before its batches are failed. */
  onExit?: () => void;
}

class ThreadWriter implements BatchWriter {
  readonly maxInFlight: number;
  private worker?: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly options: ThreadOptions) {
    this.maxInFlight = options.maxInFlight;
  }

  write(rows: BatchRows): Promise<void> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, rows });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.worker = undefined;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage({ close: true });
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(workerFile(this.options.name), { workerData: { ...this.options.workerData, customerColumns: CUSTOMER_COLUMNS, eventColumns: CLICK_EVENT_COLUMNS, outboxColumns: CLICK_OUTBOX_COLUMNS } });
    // The HTTP server keeps the process alive while there is work; the thread never should.
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.error) waiter.reject(new ClickWriteError(reply.error.message, reply.error.code));
      else waiter.resolve();
    });
    // A thread that dies takes its batches with it (each rolled back by SQLite): fail them, and
    // start a new thread for the next batch.
    const fail = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      this.options.onExit?.();
      for (const [id, waiter] of this.pending) {
        this.pending.delete(id);
        waiter.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new ClickWriteError(`click writer thread exited with code ${code}`)));
    return worker;
  }
}

/**
 * SQLite: the thread commits batches one after another, in order; letting the next batches go out
 * while one commits keeps both the event loop and the thread busy (with one, each waits for the
 * other). A thread that dies holding the write lock gives it back through `onExit`. The thread
 * starts the WAL checkpointer thread (sqlite-checkpoints.mjs); `walLimitBytes` is its bound on the
 * WAL (64 MB by default; tests set a small one).
 */
export function sqliteThreadWriter(filename: string, options: { walLimitBytes?: number } = {}): BatchWriter {
  const lock = writeLockFor(filename);
  return new ThreadWriter({ name: 'sqlite-click-writer.worker', workerData: { filename, lock: lock.buffer, walLimitBytes: options.walLimitBytes }, maxInFlight: 3, onExit: () => lock.releaseDeadWriterThread() });
}
