/**
 * A server process's outbox consumers: the event loop's runner (audit log, webhook deliveries,
 * mail: their work rows wake workers of the event loop) and the stats thread's (the rollups). The
 * domain core and the routes see one object: they poke it after committing events, tests and
 * operator commands drain it.
 */
import type { OutboxRunner } from './outbox-runner.js';
import type { StatsThread } from './stats-thread.js';

export interface Outbox {
  /** Events were committed by this process: passes soon. */
  poke(): void;
  /** A click batch committed its `clicks.recorded` events. */
  clicksCommitted(): void;
  /** Resolves once every consumer has handled what was committed before the call. */
  drain(waitMs?: number): Promise<void>;
  start(): void;
  stop(): Promise<void>;
  /** The thread of the stats consumers (jobs/stats-thread.ts). */
  readonly stats: StatsThread;
}

export class ProcessOutbox implements Outbox {
  constructor(
    private readonly runner: OutboxRunner,
    readonly stats: StatsThread,
  ) {}

  poke(): void {
    this.runner.poke();
    this.stats.poke();
  }

  // Only the stats consumers read click events; the event loop's runner moves past them at its poll.
  clicksCommitted(): void {
    this.stats.clicksCommitted();
  }

  async drain(waitMs?: number): Promise<void> {
    await Promise.all([this.runner.drain(waitMs), this.stats.drain(waitMs)]);
  }

  start(): void {
    this.runner.start();
    this.stats.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.runner.stop(), this.stats.stop()]);
  }
}
