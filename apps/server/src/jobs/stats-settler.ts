/**
 * The stats thread's other job (stats.worker.ts): once a minute, the recent rollup hours that have
 * ended are added to the settled rows of their hour, day and month (db/stats-rollups-recent.ts).
 * Every process's thread does it; on PostgreSQL two at once move each row once (the rows are
 * locked and deleted by whichever comes first). A failed move changes nothing and is tried again
 * a minute later: the stats API reads both tables, so a row that stays recent for longer is still
 * counted once.
 */
import type { Knex } from 'knex';
import { settleEndedRollups } from '../db/stats-rollups-recent.js';
import type { RunnerLog } from './outbox-runner.js';

/** How often the recent rows are looked at: an hour's rows stay recent at most this long after it ends. */
const SETTLE_EVERY_MS = 60_000;

export class RollupSettler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly db: Knex,
    private readonly logger: RunnerLog,
  ) {}

  /** Moves what has ended now, and then every SETTLE_EVERY_MS; the timer never keeps the process alive. */
  start(): void {
    void this.settle();
    this.timer = setInterval(() => void this.settle(), SETTLE_EVERY_MS);
    this.timer.unref();
  }

  /** One move, unless one is running (then that one's end). */
  settle(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= settleEndedRollups(this.db, Date.now())
      .then(
        () => undefined,
        (err: unknown) => this.logger.warn({ err }, 'stats: moving ended rollup buckets failed; tried again in a minute'),
      )
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** No move after this; resolves when the running one has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }
}
