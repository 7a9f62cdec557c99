/**
 * Statements of fixed text, run without knex's query builder: for the few statements every lead
 * and sale sends (the customer lookup, the row inserts, the guarded updates). Building a query
 * with knex and compiling it to SQL took a sixth of the event loop's time per lead on SQLite
 * (docs/performance.md, "Leads and sales without the query builder"); a text written once costs
 * nothing to compile, and SQLite's client keeps it prepared (sqlite-client.ts) as PostgreSQL keeps
 * its plan.
 *
 * The statement still goes through the client's own query path (`client.query`: the transaction's
 * connection, SQLite's write lock and statement cache, `?` numbered for PostgreSQL, knex's error
 * handling without values in messages) — only the builder and the runner are skipped. Texts use
 * `?` placeholders and identifiers that need no quoting on either engine.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isSqlite } from './knex.js';

export interface StatementOutcome {
  /** The rows a query answered (an insert with `returning` on PostgreSQL included). */
  rows: Array<Record<string, unknown>>;
  /** Rows a write changed. */
  changes: number;
  /** SQLite: the rowid of the last insert on the connection. */
  lastRowid: number | null;
}

interface ClientQuery {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  query(connection: unknown, obj: { sql: string; bindings: readonly unknown[]; method: 'raw'; options?: { name: string } }): Promise<{ response?: unknown }>;
}

// On PostgreSQL a text is sent as a named prepared statement, so each connection parses and plans
// it once: unnamed, the program-key lookup that every lead and sale makes spent twice as long being
// planned as being run (docs/performance.md, "Plans made once"). The name is the text's digest, the
// same on every connection. The texts are constants (and a few per-row-count variants), so the
// names are few; past MAX_NAMED a new text goes unnamed rather than grow every connection's cache.
const MAX_NAMED = 256;
const pgNames = new Map<string, string>();

function preparedName(sql: string): { name: string } | undefined {
  let name = pgNames.get(sql);
  if (name === undefined) {
    if (pgNames.size >= MAX_NAMED) return undefined;
    name = `reftrack_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    pgNames.set(sql, name);
  }
  return { name };
}

/** Runs `sql` with `bindings` on `db` (a transaction: its connection; else one of the pool's). */
export async function runStatement(db: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<StatementOutcome> {
  const client = db.client as unknown as ClientQuery;
  const options = isSqlite(db) ? undefined : preparedName(sql);
  const connection = await client.acquireConnection();
  let response: unknown;
  try {
    ({ response } = await client.query(connection, { sql, bindings, method: 'raw', options }));
  } finally {
    await client.releaseConnection(connection);
  }
  // SQLite (sqlite-client.ts): the rows of a reader, or the run's report of a writer.
  if (Array.isArray(response)) return { rows: response as StatementOutcome['rows'], changes: 0, lastRowid: null };
  const r = response as { rows?: StatementOutcome['rows']; rowCount?: number | null; changes?: number; lastInsertRowid?: number | bigint };
  if (r.changes !== undefined) return { rows: [], changes: r.changes, lastRowid: r.lastInsertRowid === undefined ? null : Number(r.lastInsertRowid) };
  // PostgreSQL (node-pg's result).
  return { rows: r.rows ?? [], changes: r.rowCount ?? 0, lastRowid: null };
}

/** The first row a query answers, if any, as the row type its text selects. */
export async function firstRow<T extends object = Record<string, unknown>>(db: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<T | undefined> {
  return (await runStatement(db, sql, bindings)).rows[0] as T | undefined;
}

/** Rows a write changed. */
export async function changedRows(db: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[]): Promise<number> {
  return (await runStatement(db, sql, bindings)).changes;
}

export type Scalar = string | number | boolean | null;
const insertTexts = new Map<string, string>();

/** Whether the row has columns and every value is a string, number, boolean or null (what insertRow binds as is). */
export function isScalarRow(row: Record<string, unknown>): row is Record<string, Scalar> {
  let columns = 0;
  for (const column in row) {
    const value = row[column];
    if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return false;
    columns++;
  }
  return columns > 0;
}

/**
 * Inserts one row of scalar values and answers its id (`returning id` on PostgreSQL; SQLite
 * reports the rowid of every insert, and `returning` cost it four times the insert). The text is
 * built once per table and column list; table and column names come from the code, never from
 * input.
 */
export async function insertRow(db: Knex | Knex.Transaction, table: string, row: Record<string, Scalar>): Promise<number> {
  const columns = Object.keys(row);
  const sqlite = isSqlite(db);
  const key = `${sqlite ? 's' : 'p'}:${table}:${columns.join(',')}`;
  let sql = insertTexts.get(key);
  if (sql === undefined) {
    sql = `insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})${sqlite ? '' : ' returning id'}`;
    insertTexts.set(key, sql);
  }
  const outcome = await runStatement(db, sql, Object.values(row));
  return sqlite ? Number(outcome.lastRowid) : Number(outcome.rows[0]?.id);
}
