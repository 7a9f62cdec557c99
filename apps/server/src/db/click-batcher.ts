/**
 * Group commit for the click route ("The hot write path" in the design): requests put their rows
 * into a shared batch; the batch commits as one transaction, with counter increments summed per
 * link and per partner-program; each request is answered only after its batch committed. A failed
 * batch rejects every request in it and leaves nothing behind (one transaction).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isSqlite, type Db } from './knex.js';

export interface ClickWrite {
  /** A new customer row, or undefined when an existing customer is reused (3.1). */
  customer?: Record<string, unknown>;
  event: Record<string, unknown>;
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
interface BatchRows {
  customers: Array<Record<string, unknown>>;
  events: Array<Record<string, unknown>>;
  links: Array<{ id: number; n: number; at: number }>;
  enrollments: Array<{ partnerId: number; programId: number; n: number; at: number }>;
}

export interface ClickBatcherOptions {
  maxBatch?: number;
}

export class ClickBatcher {
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly maxBatch: number;
  /**
   * Batches committing at once. SQLite has one writer, so one. PostgreSQL spends most of a batch
   * waiting on round trips and the commit's WAL flush: a second batch builds and writes meanwhile
   * (the two meet only on the counter rows, updated last, just before each commit).
   */
  private readonly maxInFlight: number;
  private idleWaiters: Array<() => void> = [];
  private readonly sqlite: boolean;

  constructor(
    private readonly db: Db,
    options: ClickBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.sqlite = isSqlite(db);
    this.maxInFlight = this.sqlite ? 1 : 2;
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

  private schedule(): void {
    if (this.inFlight >= this.maxInFlight || this.scheduled) return;
    this.scheduled = true;
    // One turn of the event loop lets the requests already read off the sockets join this batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.maxInFlight) return;
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) {
      if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.inFlight++;
    try {
      await this.commit(batch.map((p) => p.write));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.inFlight--;
    }
    if (this.queue.length > 0) this.schedule();
    else if (this.inFlight === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  private async commit(writes: ClickWrite[]): Promise<void> {
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
    const rows: BatchRows = {
      customers,
      events,
      links: [...links].map(([id, v]) => ({ id, ...v })).sort((a, b) => a.id - b.id),
      enrollments: [...enrollments.values()].sort((a, b) => a.partnerId - b.partnerId || a.programId - b.programId),
    };
    await this.db.transaction((trx) => (this.sqlite ? writeWithPreparedStatements(trx, rows) : writeWithArrays(trx, rows)));
  }
}

/** The part of better-sqlite3's connection the batch uses. */
interface SqliteConnection {
  prepare(sql: string): { run(...params: unknown[]): unknown };
}

const prepared = new WeakMap<object, Map<string, ReturnType<SqliteConnection['prepare']>>>();

/** A statement prepared once per connection: knex would compile and prepare it anew for every batch. */
function statement(conn: SqliteConnection, sql: string): ReturnType<SqliteConnection['prepare']> {
  let cache = prepared.get(conn);
  if (!cache) prepared.set(conn, (cache = new Map()));
  let stmt = cache.get(sql);
  if (!stmt) cache.set(sql, (stmt = conn.prepare(sql)));
  return stmt;
}

// better-sqlite3 binds numbers, strings, null and buffers; booleans are stored as 0/1 like knex does.
const bindable = (v: unknown): unknown => (typeof v === 'boolean' ? (v ? 1 : 0) : v === undefined ? null : v);

function insertAll(conn: SqliteConnection, table: string, rows: Array<Record<string, unknown>>): void {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const stmt = statement(conn, `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  for (const row of rows) stmt.run(...columns.map((c) => bindable(row[c])));
}

/**
 * SQLite: the batch's rows go through statements prepared once, on the connection of the knex
 * transaction (knex still owns the connection, the transaction and its commit or rollback).
 */
async function writeWithPreparedStatements(trx: Knex.Transaction, { customers, events, links, enrollments }: BatchRows): Promise<void> {
  const conn = (await trx.client.acquireConnection()) as SqliteConnection;
  insertAll(conn, 'customers', customers);
  insertAll(conn, 'click_events', events);
  const link = statement(conn, 'update referral_links set clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) where id = ?');
  for (const { id, n, at } of links) link.run(n, at, id);
  const enrollment = statement(conn, 'update partner_programs set clicks = clicks + ?, last_clicked_at = max(coalesce(last_clicked_at, 0), ?) where partner_id = ? and program_id = ?');
  for (const { partnerId, programId, n, at } of enrollments) enrollment.run(n, at, partnerId, programId);
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
async function insertArrays(conn: PgConnection, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const casts = columns.map((c, i) => `$${i + 1}::${PG_TYPES[c] ?? 'text'}[]`).join(', ');
  await pgQuery(conn, `insert into ${table} (${columns.join(', ')}) select * from unnest(${casts})`, columns.map((c) => rows.map((r) => r[c] ?? null)));
}

/**
 * PostgreSQL: the batch goes out as a few statements of fixed text on the connection of the knex
 * transaction (knex still owns the connection, the transaction and its commit or rollback).
 */
async function writeWithArrays(trx: Knex.Transaction, { customers, events, links, enrollments }: BatchRows): Promise<void> {
  const conn = (await trx.client.acquireConnection()) as PgConnection;
  await insertArrays(conn, 'customers', customers);
  await insertArrays(conn, 'click_events', events);
  for (const { id, n, at } of links) {
    await pgQuery(conn, 'update referral_links set clicks = clicks + $1, last_clicked = greatest(coalesce(last_clicked, 0), $2) where id = $3', [n, at, id]);
  }
  for (const { partnerId, programId, n, at } of enrollments) {
    await pgQuery(conn, 'update partner_programs set clicks = clicks + $1, last_clicked_at = greatest(coalesce(last_clicked_at, 0), $2) where partner_id = $3 and program_id = $4', [n, at, partnerId, programId]);
  }
}
