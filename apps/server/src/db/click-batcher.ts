/**
 * Group commit for the click route ("The hot write path" in the design): requests put their rows
 * into a shared batch; the batch commits as one transaction, with counter increments summed per
 * link and per partner-program; each request is answered only after its batch committed. A failed
 * batch rejects every request in it and leaves nothing behind (one transaction). The batch is
 * committed by a writer: a thread of its own on SQLite (click-writer-thread.ts), statements with
 * one array per column on PostgreSQL (below).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isSqlite, type Db } from './knex.js';
import { SqliteThreadWriter } from './click-writer-thread.js';

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

export interface ClickBatcherOptions {
  maxBatch?: number;
}

export class ClickBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly writer: BatchWriter,
    options: ClickBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
  }

  submit(write: ClickWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
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
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) {
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.inFlight++;
    try {
      await this.writer.write(reduce(batch.map((p) => p.write)));
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

function reduce(writes: ClickWrite[]): BatchRows {
  const customers = writes.flatMap((w) => (w.customer ? [w.customer] : []));
  const events = writes.map((w) => w.event);
  const links = new Map<number, { n: number; at: number }>();
  const enrollments = new Map<string, { partnerId: number; programId: number; n: number; at: number }>();
  for (const w of writes) {
    const link = links.get(w.linkId) ?? { n: 0, at: 0 };
    link.n += 1;
    link.at = Math.max(link.at, w.at);
    links.set(w.linkId, link);
    const key = `${w.partnerId}:${w.programId}`;
    const pp = enrollments.get(key) ?? { partnerId: w.partnerId, programId: w.programId, n: 0, at: 0 };
    pp.n += 1;
    pp.at = Math.max(pp.at, w.at);
    enrollments.set(key, pp);
  }
  // Rows are locked in one order (by key) so that two batches in flight cannot deadlock.
  return {
    customers,
    events,
    links: [...links].map(([id, v]) => ({ id, ...v })).sort((a, b) => a.id - b.id),
    enrollments: [...enrollments.values()].sort((a, b) => a.partnerId - b.partnerId || a.programId - b.programId),
  };
}

/** The batch writer of this database: a writer thread on SQLite, array statements on PostgreSQL. */
export function clickWriterFor(db: Db): BatchWriter {
  if (isSqlite(db)) return new SqliteThreadWriter((db.client as { connectionSettings: { filename: string } }).connectionSettings.filename);
  return new PostgresArrayWriter(db);
}

/** The part of node-postgres's client the batch uses. */
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
}

/** Column types for `unnest`; every other column of these tables is text. */
const PG_TYPES: Record<string, string> = {
  program_id: 'int4',
  partner_id: 'int4',
  link_id: 'int4',
  is_test: 'bool',
  click_at: 'int8',
  click_timestamp: 'int8',
  created_at: 'int8',
};

/** A named statement: node-postgres prepares it once per connection and reuses its plan. */
function pgQuery(conn: PgConnection, text: string, values: unknown[]): Promise<unknown> {
  return conn.query({ name: 'rt_' + createHash('sha1').update(text).digest('hex').slice(0, 16), text, values });
}

/** All rows of a table in one statement of fixed text: one array parameter per column. */
async function insertArrays(conn: PgConnection, table: string, columns: readonly string[], rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const casts = columns.map((c, i) => `$${i + 1}::${PG_TYPES[c] ?? 'text'}[]`).join(', ');
  await pgQuery(conn, `insert into ${table} (${columns.join(', ')}) select * from unnest(${casts})`, columns.map((_, i) => rows.map((r) => r[i] ?? null)));
}

/**
 * PostgreSQL: the batch goes out as a few statements of fixed text on the connection of the knex
 * transaction (knex still owns the connection, the transaction and its commit or rollback).
 */
async function writeWithArrays(trx: Knex.Transaction, { customers, events, links, enrollments }: BatchRows): Promise<void> {
  const conn = (await trx.client.acquireConnection()) as PgConnection;
  await insertArrays(conn, 'customers', CUSTOMER_COLUMNS, customers);
  await insertArrays(conn, 'click_events', CLICK_EVENT_COLUMNS, events);
  for (const { id, n, at } of links) {
    await pgQuery(conn, 'update referral_links set clicks = clicks + $1, last_clicked = greatest(coalesce(last_clicked, 0), $2) where id = $3', [n, at, id]);
  }
  for (const { partnerId, programId, n, at } of enrollments) {
    await pgQuery(conn, 'update partner_programs set clicks = clicks + $1, last_clicked_at = greatest(coalesce(last_clicked_at, 0), $2) where partner_id = $3 and program_id = $4', [n, at, partnerId, programId]);
  }
}

/**
 * PostgreSQL spends most of a batch waiting on round trips and the commit's WAL flush: a second
 * batch builds and writes meanwhile (the two meet only on the counter rows, updated last, just
 * before each commit).
 */
class PostgresArrayWriter implements BatchWriter {
  readonly maxInFlight = 2;
  constructor(private readonly db: Db) {}
  async write(rows: BatchRows): Promise<void> {
    await this.db.transaction((trx) => writeWithArrays(trx, rows));
  }
  async close(): Promise<void> {}
}
