/**
 * A queue that hands its waiting items to one batch at a time: while a batch is in the database,
 * the requests that arrive wait, and go together in the next one. With one request in flight a
 * batch holds one item and costs what the item alone would; under load each batch's statements
 * carry many items, so PostgreSQL wakes, plans and commits once per batch instead of once per
 * request (docs/performance.md, "PostgreSQL leads and sales in group commits").
 *
 * Each item keeps the async context it was submitted in, and a batch runs in its first item's:
 * what a request's context records (db/round-trips.ts counts its statements) is charged to a
 * request that was in the batch, never to one that has finished.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Db } from './knex.js';
import type { Metrics } from '../ops/metrics.js';

interface Waiting<I, O> {
  item: I;
  context: AsyncResource;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/** How one batch settles each of its items: `done` or `failed`, or `again` to go in the next batch. */
export interface BatchOutcome<O> {
  done(index: number, value: O): void;
  failed(index: number, err: unknown): void;
  again(index: number): void;
}

export class GroupCommitQueue<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private running = false;

  /**
   * `process` settles every item through `outcome`; an item it leaves unsettled, or every
   * unsettled item when it throws, fails with what it threw (or an error saying it was not settled).
   */
  constructor(
    private readonly process: (items: I[], outcome: BatchOutcome<O>) => Promise<void>,
    private readonly maxBatch: number,
    /** Told each group's size as it starts (the metrics). */
    private readonly onGroup: (size: number) => void = () => undefined,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, context: new AsyncResource('reftrack.group-commit'), resolve, reject });
      if (!this.running) this.drain();
    });
  }

  private drain(): void {
    const batch = this.waiting.splice(0, this.maxBatch);
    if (batch.length === 0) {
      this.running = false;
      return;
    }
    this.running = true;
    this.onGroup(batch.length);
    batch[0]!.context.runInAsyncScope(() => {
      void this.runBatch(batch).finally(() => this.drain());
    });
  }

  private async runBatch(batch: Waiting<I, O>[]): Promise<void> {
    const settled = new Array<boolean>(batch.length).fill(false);
    const retry: Waiting<I, O>[] = [];
    const settle = (index: number, how: () => void) => {
      if (settled[index]) return;
      settled[index] = true;
      how();
    };
    const outcome: BatchOutcome<O> = {
      done: (i, value) => settle(i, () => batch[i]!.resolve(value)),
      failed: (i, err) => settle(i, () => batch[i]!.reject(err)),
      // Keeps its own context: were it first in the next batch, that batch is charged to it.
      again: (i) => settle(i, () => retry.push(batch[i]!)),
    };
    let thrown: unknown = new Error('a group commit left an item unsettled');
    try {
      await this.process(
        batch.map((w) => w.item),
        outcome,
      );
    } catch (err) {
      thrown = err;
    }
    batch.forEach((w, i) => settle(i, () => w.reject(thrown)));
    // Items sent round again go first: they arrived before everything waiting now.
    this.waiting.unshift(...retry);
  }
}

/**
 * The queues of one route, one per database (a process serves one; tests start several), each
 * made on first use and reporting its groups' sizes to `reftrack_tracking_group_size`.
 */
export function queuePerDatabase<I, O>(route: 'lead' | 'sale', maxGroup: number, commit: (db: Db, items: I[], outcome: BatchOutcome<O>) => Promise<void>) {
  const queues = new WeakMap<Db, GroupCommitQueue<I, O>>();
  return (db: Db, metrics: Metrics): GroupCommitQueue<I, O> => {
    let queue = queues.get(db);
    if (!queue) {
      const sizes = metrics.trackingGroupSize.labels(route);
      queue = new GroupCommitQueue<I, O>((items, outcome) => commit(db, items, outcome), maxGroup, (size) => sizes.observe(size));
      queues.set(db, queue);
    }
    return queue;
  };
}
