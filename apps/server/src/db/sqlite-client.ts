/**
 * Knex's better-sqlite3 dialect with three changes. Statements are prepared once per connection
 * and reused (an LRU keyed by SQL text), where the stock dialect prepares every statement anew —
 * the largest share of a lead's or sale's time on SQLite. A query's LIMIT is written into its SQL
 * as a number instead of a bound parameter (see `InlineLimitCompiler`). And every write, or write
 * transaction from BEGIN to its end, holds the file's write lock shared with the click writer
 * thread (sqlite-write-lock.ts). Everything else is the stock dialect.
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
interface StockCompiler {
  single: Record<string, unknown>;
  _getValueOrParameterFromAttribute(attribute: string, rawValue?: unknown): string;
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

// The stock client's query compiler (knex exports no dialect classes either).
const StockCompiler = require('knex/lib/dialects/sqlite3/query/sqlite-querycompiler') as new (...args: unknown[]) => StockCompiler;

/**
 * SQLite (3.51, bundled by better-sqlite3) reads a LIMIT given as a bound parameter while planning
 * and marks the statement to be planned again whenever that parameter is bound anew — which is
 * every execution of a cached statement. Every `.first()` is `limit ?`: a customer lookup took
 * ~25 µs that way and ~5 µs with `limit 1` (a program-key lookup ~7 against ~2). Knex's builder
 * has already made the limit an integer (`parseInt`), and it is checked again here, so writing it
 * into the SQL cannot inject anything; the statement cache then holds one statement per limit.
 */
class InlineLimitCompiler extends StockCompiler {
  override _getValueOrParameterFromAttribute(attribute: string, rawValue?: unknown): string {
    const value = this.single[attribute];
    if (attribute === 'limit' && rawValue == null && Number.isSafeInteger(value)) return String(value);
    return super._getValueOrParameterFromAttribute(attribute, rawValue);
  }
}

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

/**
 * Write-lock wait observers per Knex instance, keyed by its connection settings: a transaction runs
 * on a client object of its own that knex derives from the instance's (without its fields), sharing
 * only such settings with it.
 */
const lockWaitObservers = new WeakMap<object, Set<(seconds: number) => void>>();

export class CachingBetterSqlite3Client extends StockBetterSqlite3 {
  private writeLock?: SqliteWriteLock;

  /**
   * Tells `observe` how long each write of this Knex instance waited for the file's write lock (the
   * metric of ops/pool-wait.ts); returns the function that stops it.
   */
  observeWriteLockWaits(observe: (seconds: number) => void): () => void {
    let set = lockWaitObservers.get(this.connectionSettings);
    if (!set) lockWaitObservers.set(this.connectionSettings, (set = new Set()));
    set.add(observe);
    return () => void set.delete(observe);
  }

  queryCompiler(builder: unknown, formatter: unknown): StockCompiler {
    return new InlineLimitCompiler(this, builder, formatter);
  }

  override async _query(connection: Connection, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql || !connection) return super._query(connection, obj);
    // Per-query integer options need a statement of their own: leave those to the stock path.
    const stock = this._optSafeIntegers(obj.options) !== undefined;
    const statement = stock ? undefined : cachedStatement(connection, obj.sql);
    if (!holding.has(connection) && (!statement || !statement.reader)) {
      this.writeLock ??= writeLockFor(this.connectionSettings.filename);
      const observers = lockWaitObservers.get(this.connectionSettings);
      const started = observers?.size ? performance.now() : 0;
      await this.writeLock.acquire();
      holding.add(connection);
      if (observers && started) for (const observe of observers) observe((performance.now() - started) / 1000);
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
