/**
 * Group commit for the click route ("The hot write path" in the design): requests put their rows
 * into a shared batch; the batch commits as one transaction, with counter increments summed per
 * link and per partner-program; each request is answered only after its batch committed. A failed
 * batch rejects every request in it and leaves nothing behind (one transaction). The batch is
 * committed by a writer thread (click-writer-thread.ts).
 */
import type { DatabaseConfig } from '../config.js';
import { postgresThreadWriter, sqliteThreadWriter } from './click-writer-thread.js';

/**
 * The columns of the rows a click writes, in the order of each row's values. Rows travel as arrays
 * (to the writer thread, into statements): objects of this many keys were the costliest step of
 * building a click, and of copying a batch to the thread.
 */
export const CUSTOMER_COLUMNS = ['click_id', 'program_id', 'partner_id', 'link_id', 'status', 'is_test', 'click_at', 'created_at'] as const;
export const CLICK_EVENT_COLUMNS = [
  'program_id',
  'link_id',
  'partner_id',
  'click_id',
  'is_test',
  'session_id',
  'page_url',
  'page_title',
  'referrer_url',
  'screen_resolution',
  'viewport_size',
  'language',
  'timezone',
  'user_agent',
  'geo_country',
  'geo_region',
  'geo_city',
  'device_type',
  'device_os',
  'browser_name',
  'click_timestamp',
  'created_at',
] as const;
export type Row = unknown[];

/** A row as an object, for knex (test clicks are written outside the batch). */
export function rowObject(columns: readonly string[], row: Row): Record<string, unknown> {
  return Object.fromEntries(columns.map((c, i) => [c, row[i]]));
}

export interface ClickWrite {
  /** A new customer row (CUSTOMER_COLUMNS), or undefined when an existing customer is reused (3.1). */
  customer?: Row;
  /** The click event row (CLICK_EVENT_COLUMNS). */
  event: Row;
  linkId: number;
  partnerId: number;
  programId: number;
  at: number;
}

interface Pending {
  write: ClickWrite;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** One batch, reduced: rows to insert, and counter increments summed per row in key order. */
export interface BatchRows {
  customers: Row[];
  events: Row[];
  links: Array<{ id: number; n: number; at: number }>;
  enrollments: Array<{ partnerId: number; programId: number; n: number; at: number }>;
}

/** Commits one reduced batch atomically: all of it or nothing. */
export interface BatchWriter {
  /** Batches committing at once. */
  readonly maxInFlight: number;
  write(rows: BatchRows): Promise<void>;
  close(): Promise<void>;
}

/** Clicks per transaction at most; a longer queue goes out in several batches. */
const MAX_BATCH = 500;

/**
 * A batch this large goes to the writer at once, while a writer slot is free, rather than at the
 * end of the event loop's turn: it commits while the loop reads and answers the other requests.
 * Otherwise the clients of one answered batch come back together, form the next batch together,
 * and the loop waits idle through each commit (docs/performance.md, "Where the time goes").
 */
const EARLY_BATCH = 30;

export class ClickBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly writer: BatchWriter) {}

  submit(write: ClickWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (this.queue.length >= EARLY_BATCH && this.inFlight < this.writer.maxInFlight) void this.flush();
      else this.schedule();
    });
  }

  /** Resolves once everything submitted so far has been committed or failed. */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Drains, then releases the writer (its thread or nothing). */
  async close(): Promise<void> {
    await this.drain();
    await this.writer.close();
  }

  private schedule(): void {
    if (this.inFlight >= this.writer.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // One turn of the event loop lets the requests already read off the sockets join this batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.writer.maxInFlight) return;
    const batch = this.queue.splice(0, MAX_BATCH);
    if (batch.length === 0) {
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.inFlight++;
    try {
      await this.writer.write(reduce(batch));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.inFlight--;
    }
    if (this.queue.length > 0) this.schedule();
    else if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

function reduce(batch: Pending[]): BatchRows {
  const customers: Row[] = [];
  const events: Row[] = [];
  const links = new Map<number, { id: number; n: number; at: number }>();
  const enrollments = new Map<string, { partnerId: number; programId: number; n: number; at: number }>();
  for (const { write: w } of batch) {
    if (w.customer) customers.push(w.customer);
    events.push(w.event);
    const link = links.get(w.linkId);
    if (link) {
      link.n += 1;
      link.at = Math.max(link.at, w.at);
    } else {
      links.set(w.linkId, { id: w.linkId, n: 1, at: w.at });
    }
    const key = `${w.partnerId}:${w.programId}`;
    const pp = enrollments.get(key);
    if (pp) {
      pp.n += 1;
      pp.at = Math.max(pp.at, w.at);
    } else {
      enrollments.set(key, { partnerId: w.partnerId, programId: w.programId, n: 1, at: w.at });
    }
  }
  // Rows are locked in one order (by key) so that two batches in flight cannot deadlock.
  return {
    customers,
    events,
    links: [...links.values()].sort((a, b) => a.id - b.id),
    enrollments: [...enrollments.values()].sort((a, b) => a.partnerId - b.partnerId || a.programId - b.programId),
  };
}

/** The batch writer of this database: a writer thread of the server process on either engine. */
export function clickWriterFor(database: DatabaseConfig): BatchWriter {
  return database.client === 'sqlite' ? sqliteThreadWriter(database.filename) : postgresThreadWriter(database.connectionString, database.schema);
}
