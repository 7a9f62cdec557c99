/**
 * Group commit for the click route ("The hot write path" in the design): requests put their rows
 * into a shared batch; the batch commits as one transaction, with counter increments summed per
 * link and per partner-program; each request is answered only after its batch committed. A failed
 * batch rejects every request in it and leaves nothing behind (one transaction).
 */
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

export interface ClickBatcherOptions {
  maxBatch?: number;
}

const INSERT_CHUNK = 200;

export class ClickBatcher {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;
  private readonly maxBatch: number;
  private idleWaiters: Array<() => void> = [];

  private readonly sqlite: boolean;

  constructor(
    private readonly db: Db,
    options: ClickBatcherOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.sqlite = isSqlite(db);
  }

  submit(write: ClickWrite): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far has been committed or failed. */
  drain(): Promise<void> {
    if (!this.flushing && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // One turn of the event loop lets the requests already read off the sockets join this batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing) return;
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) {
      for (const wake of this.idleWaiters.splice(0)) wake();
      return;
    }
    this.flushing = true;
    try {
      await this.commit(batch.map((p) => p.write));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.flushing = false;
    }
    if (this.queue.length > 0) void this.flush();
    else for (const wake of this.idleWaiters.splice(0)) wake();
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
    await this.db.transaction(async (trx) => {
      if (this.sqlite) {
        await writeWithPreparedStatements(trx, customers, events, links, enrollments);
        return;
      }
      for (let i = 0; i < customers.length; i += INSERT_CHUNK) await trx('customers').insert(customers.slice(i, i + INSERT_CHUNK));
      for (let i = 0; i < events.length; i += INSERT_CHUNK) await trx('click_events').insert(events.slice(i, i + INSERT_CHUNK));
      for (const [id, { n, at }] of links) {
        await trx('referral_links')
          .where({ id })
          .update({ clicks: trx.raw('clicks + ?', [n]), last_clicked: trx.raw('CASE WHEN last_clicked IS NULL OR last_clicked < ? THEN ? ELSE last_clicked END', [at, at]) });
      }
      for (const { partnerId, programId, n, at } of enrollments.values()) {
        await trx('partner_programs')
          .where({ partner_id: partnerId, program_id: programId })
          .update({
            clicks: trx.raw('clicks + ?', [n]),
            last_clicked_at: trx.raw('CASE WHEN last_clicked_at IS NULL OR last_clicked_at < ? THEN ? ELSE last_clicked_at END', [at, at]),
          });
      }
    });
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
async function writeWithPreparedStatements(
  trx: Knex.Transaction,
  customers: Array<Record<string, unknown>>,
  events: Array<Record<string, unknown>>,
  links: Map<number, { n: number; at: number }>,
  enrollments: Map<string, { partnerId: number; programId: number; n: number; at: number }>,
): Promise<void> {
  const conn = (await trx.client.acquireConnection()) as SqliteConnection;
  insertAll(conn, 'customers', customers);
  insertAll(conn, 'click_events', events);
  const link = statement(conn, 'update referral_links set clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) where id = ?');
  for (const [id, { n, at }] of links) link.run(n, at, id);
  const enrollment = statement(conn, 'update partner_programs set clicks = clicks + ?, last_clicked_at = max(coalesce(last_clicked_at, 0), ?) where partner_id = ? and program_id = ?');
  for (const { partnerId, programId, n, at } of enrollments.values()) enrollment.run(n, at, partnerId, programId);
}
