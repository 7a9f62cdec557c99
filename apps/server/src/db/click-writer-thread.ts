/**
 * SQLite: click batches are committed by a writer thread (click-writer.worker.mjs) on its own
 * connection, so the event loop spends no time in inserts, commits or WAL checkpoints. The thread
 * and the event loop's connection take turns through the file's write lock.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CLICK_EVENT_COLUMNS, CUSTOMER_COLUMNS, type BatchRows, type BatchWriter } from './click-batcher.js';
import { writeLockFor } from './sqlite-write-lock.js';

/** From the sources the thread is a sibling of this module; in dist, tsup puts it beside the chunk. */
function workerFile(): string {
  const candidates = ['./click-writer.worker.mjs', './click-writer.worker.js'].map((f) => fileURLToPath(new URL(f, import.meta.url)));
  const found = candidates.find((f) => fs.existsSync(f));
  if (!found) throw new Error(`click writer thread not found (looked for ${candidates.join(', ')})`);
  return found;
}

interface Reply {
  id: number;
  error?: { message: string; code?: string };
}

/** A failure reported by the writer thread, with SQLite's error code when it had one. */
export class ClickWriteError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ClickWriteError';
  }
}

export class SqliteThreadWriter implements BatchWriter {
  /**
   * The thread commits batches one after another, in order; letting the next batch go out while
   * one commits keeps both the event loop and the thread busy (with one, each waits for the other).
   */
  readonly maxInFlight = 3;
  private worker?: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  constructor(private readonly filename: string) {}

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
    const worker = new Worker(workerFile(), { workerData: { filename: this.filename, lock: writeLockFor(this.filename).buffer, customerColumns: CUSTOMER_COLUMNS, eventColumns: CLICK_EVENT_COLUMNS } });
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
      writeLockFor(this.filename).releaseDeadWriterThread();
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
