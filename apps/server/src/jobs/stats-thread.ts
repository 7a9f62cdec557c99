/**
 * The stats thread, seen from the event loop: starts `stats.worker` (dist/stats.worker.js, beside
 * the server's bundle), forwards the outbox's pokes to it, answers `drain` once the thread has
 * drained, and starts a new thread when one dies. Why a thread: the stats consumers' rollup
 * upserts (~30 rows per lead or sale, one row per program, hour and dimension) cost the event loop
 * more than a lead's own statements; in a thread with a connection of its own they run on the
 * other core (docs/performance.md, "The stats thread").
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DatabaseConfig } from '../config.js';
import { LOCK_STATS_THREAD, writeLockFor } from '../db/sqlite-write-lock.js';
import type { Logger } from '../logger.js';
import { POLL_MS } from './outbox-runner.js';
import type { FromStatsThread, StatsThreadData, ToStatsThread } from './stats.worker.js';

/** Pokes forwarded at most this often: the thread's runner starts a pass at most every 100 ms anyway. */
const POKE_GAP_MS = 50;
/** How long after a thread died the next one starts. */
const RESTART_MS = 1000;
/** How long `stop` waits for the thread's pass in progress before it terminates the thread. */
const STOP_WAIT_MS = 10_000;

/**
 * The worker's file: beside the bundle in dist (tsup.config.ts builds it as an entry). Tests run
 * the server from its TypeScript sources, where no such file exists: their setup bundles the same
 * entry with tsup and names it in REFTRACK_STATS_WORKER (vitest.config.ts).
 */
function workerFile(): string {
  const beside = fileURLToPath(new URL('./stats.worker.js', import.meta.url));
  if (fs.existsSync(beside)) return beside;
  const built = process.env.REFTRACK_STATS_WORKER;
  if (built && fs.existsSync(built)) return built;
  throw new Error(`the stats thread's file is missing (looked for ${beside}${built ? ` and ${built}` : ''}): build the server`);
}

export class StatsThread {
  private worker?: Worker;
  private stopping = false;
  private restart?: NodeJS.Timeout;
  private lastPoke = 0;
  private pokeTimer?: NodeJS.Timeout;
  private lastClicks = 0;
  private nextDrain = 1;
  private readonly drains = new Map<number, { resolve: () => void; waitMs?: number }>();
  private stopped?: Promise<void>;

  constructor(
    private readonly database: DatabaseConfig,
    private readonly logger: Pick<Logger, 'warn' | 'error'>,
  ) {}

  start(): void {
    if (this.stopping || this.worker) return;
    const data: StatsThreadData = { database: this.database, ...(this.database.client === 'sqlite' ? { writeLock: writeLockFor(this.database.filename).buffer } : {}) };
    const worker = new Worker(workerFile(), { workerData: data });
    this.worker = worker;
    // The HTTP server keeps the process alive while there is work; the thread never should.
    worker.unref();
    worker.on('message', (message: FromStatsThread) => {
      if (message.type === 'log') this.logger[message.level]({ ...message.obj, thread: 'stats' }, message.msg);
      else if (message.type === 'drained') {
        this.drains.get(message.id)?.resolve();
        this.drains.delete(message.id);
      }
    });
    worker.on('error', (err) => this.logger.error({ err }, 'the stats thread failed; a new one starts'));
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      // SQLite rolled back the pass of a thread that died mid-transaction; the lock is not released by it.
      if (this.database.client === 'sqlite') writeLockFor(this.database.filename).releaseDeadHolder(LOCK_STATS_THREAD);
      if (this.stopping) {
        for (const { resolve } of this.drains.values()) resolve();
        this.drains.clear();
        return;
      }
      this.restart = setTimeout(() => {
        this.restart = undefined;
        this.start();
      }, RESTART_MS);
      this.restart.unref();
    });
    // Drains asked of a thread that died are asked of this one.
    for (const [id, { waitMs }] of this.drains) this.send({ type: 'drain', id, ...(waitMs === undefined ? {} : { waitMs }) });
  }

  /** Events were committed: the thread passes soon (forwarded at most every POKE_GAP_MS, the last one always). */
  poke(): void {
    if (this.pokeTimer) return;
    const wait = this.lastPoke + POKE_GAP_MS - Date.now();
    if (wait <= 0) return this.sendPoke();
    this.pokeTimer = setTimeout(() => {
      this.pokeTimer = undefined;
      this.sendPoke();
    }, wait);
    this.pokeTimer.unref();
  }

  /** A click batch committed: forwarded at most once per POLL_MS, as the runner itself would take it. */
  clicksCommitted(): void {
    const now = Date.now();
    if (now - this.lastClicks < POLL_MS) return;
    this.lastClicks = now;
    this.send({ type: 'clicks' });
  }

  /** Resolves once the thread has handled everything committed before the call (OutboxRunner.drain). */
  drain(waitMs?: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const id = this.nextDrain++;
    return new Promise((resolve) => {
      this.drains.set(id, { resolve, ...(waitMs === undefined ? {} : { waitMs }) });
      this.send({ type: 'drain', id, ...(waitMs === undefined ? {} : { waitMs }) });
    });
  }

  /** Lets the pass in progress finish and closes the thread's connection; terminates a thread that does not answer. */
  stop(): Promise<void> {
    return (this.stopped ??= (async () => {
      this.stopping = true;
      clearTimeout(this.restart);
      clearTimeout(this.pokeTimer);
      const worker = this.worker;
      if (!worker) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      this.send({ type: 'stop' });
      const timer = setTimeout(() => void worker.terminate(), STOP_WAIT_MS);
      await exited;
      clearTimeout(timer);
    })());
  }

  /** Ends the thread at once, as a crash would: its pass rolls back and a new thread starts RESTART_MS later (tests). */
  async terminate(): Promise<void> {
    await this.worker?.terminate();
  }

  private sendPoke(): void {
    this.lastPoke = Date.now();
    this.send({ type: 'poke' });
  }

  private send(message: ToStatsThread): void {
    this.worker?.postMessage(message);
  }
}
