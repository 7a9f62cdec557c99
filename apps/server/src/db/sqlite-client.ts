/**
 * Knex's better-sqlite3 dialect with two changes. Statements are prepared once per connection and
 * reused (an LRU keyed by SQL text), where the stock dialect prepares every statement anew — the
 * largest share of a lead's or sale's time on SQLite. And every write, or write transaction from
 * BEGIN to its end, holds the file's write lock shared with the click writer thread
 * (sqlite-write-lock.ts). Everything else is the stock dialect.
 */
import { createRequire } from 'node:module';
import { writeLockFor, type SqliteWriteLock } from './sqlite-write-lock.js';

interface Statement {
  reader: boolean;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): { lastInsertRowid: number | bigint; changes: number };
}
interface Connection {
  prepare(sql: string): Statement;
  readonly inTransaction: boolean;
}
interface QueryObject {
  sql?: string;
  bindings?: unknown[];
  options?: unknown;
  response?: unknown;
  context?: unknown;
}
interface StockClient {
  connectionSettings: { filename: string };
  _query(connection: Connection, obj: QueryObject): Promise<QueryObject>;
  _formatBindings(bindings: unknown[] | undefined): unknown[];
  _optSafeIntegers(options: unknown): boolean | undefined;
}

const require = createRequire(import.meta.url);
// knex exports no dialect classes; the stock client is what `client: 'better-sqlite3'` resolves to.
const StockBetterSqlite3 = require('knex/lib/dialects/better-sqlite3') as new (config: unknown) => StockClient;

const CACHE_SIZE = 500;
const caches = new WeakMap<Connection, Map<string, Statement>>();

function cachedStatement(connection: Connection, sql: string): Statement {
  let cache = caches.get(connection);
  if (!cache) caches.set(connection, (cache = new Map()));
  let statement = cache.get(sql);
  if (statement) {
    // Re-insert to keep the map in least-recently-used order.
    cache.delete(sql);
  } else {
    statement = connection.prepare(sql);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  }
  cache.set(sql, statement);
  return statement;
}

/** Connections that hold their file's write lock: from a write or BEGIN until no transaction is open. */
const holding = new WeakSet<Connection>();

export class CachingBetterSqlite3Client extends StockBetterSqlite3 {
  private writeLock?: SqliteWriteLock;

  override async _query(connection: Connection, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql || !connection) return super._query(connection, obj);
    // Per-query integer options need a statement of their own: leave those to the stock path.
    const stock = this._optSafeIntegers(obj.options) !== undefined;
    const statement = stock ? undefined : cachedStatement(connection, obj.sql);
    if (!holding.has(connection) && (!statement || !statement.reader)) {
      this.writeLock ??= writeLockFor(this.connectionSettings.filename);
      await this.writeLock.acquire();
      holding.add(connection);
    }
    try {
      if (!statement) return await super._query(connection, obj);
      const bindings = this._formatBindings(obj.bindings);
      if (statement.reader) {
        obj.response = statement.all(bindings);
        return obj;
      }
      const response = statement.run(bindings);
      obj.response = response;
      obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
      return obj;
    } finally {
      if (holding.has(connection) && !connection.inTransaction) {
        holding.delete(connection);
        this.writeLock?.release();
      }
    }
  }
}
