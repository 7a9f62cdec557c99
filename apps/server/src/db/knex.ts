/** The Knex instance for SQLite (embedded default) or PostgreSQL. */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { CachingBetterSqlite3Client } from './sqlite-client.js';
import type { DatabaseConfig } from '../config.js';
import { keepHeap } from './pg-backend-heap.js';

// Epoch-millisecond columns, counters and money are bigint; node-pg returns int8 and numeric as
// strings unless told otherwise. Every value the server stores stays below 2^53 (amounts and rates
// are bounded by LIMITS, running totals are guarded: docs/security.md, "Amounts"), so a Number is
// exact — and a value that is not (a sum past 2^53) fails its query instead of being rounded.
pg.types.setTypeParser(20, exactInteger);
pg.types.setTypeParser(1700, (v) => (/^-?\d+(\.0*)?$/.test(v) ? exactInteger(v.split('.')[0]) : Number(v)));

export type Db = Knex;

/**
 * An integer read from the database as a Number, or an error when a Number cannot hold it exactly.
 * Sums of money are read through this (select them `as text` on SQLite, whose driver would round
 * a large integer silently).
 */
export function exactInteger(value: unknown): number {
  const n = typeof value === 'bigint' ? Number(value) : typeof value === 'string' ? Number(value.trim()) : (value as number);
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || (typeof value === 'bigint' && BigInt(n) !== value) || (typeof value === 'string' && BigInt(value.trim()) !== BigInt(n))) {
    throw new RangeError('an integer from the database is beyond the exact range of a JavaScript number');
  }
  return n;
}

/**
 * A failed statement's error names its SQL with placeholders, never its values: by default knex
 * writes every bound value into the error's message, and a logged failure would then carry
 * whatever the statement was writing (a sealed secret, an e-mail, a payout detail).
 */
const NO_VALUES_IN_ERRORS = { compileSqlOnError: false } as const;

/**
 * Where knex's own warnings go. By default they are plain console lines (a "Connection Error" per
 * failed connect while the database is down); a server passes its logger so its output stays JSON
 * lines, at debug level: an outage is logged once per change of state (ops/service-state.ts).
 */
export interface DbLog {
  debug(obj: object, msg: string): void;
}

const knexLog = (log: DbLog) => {
  const line = (level: string) => (message: unknown) => log.debug({ knex: level, detail: String(message) }, 'database client message');
  return { warn: line('warn'), error: line('error'), deprecate: line('deprecate'), debug: line('debug') };
};

export function createDb(config: DatabaseConfig, log?: DbLog): Db {
  const logging = log ? { log: knexLog(log) } : {};
  if (config.client === 'sqlite') {
    fs.mkdirSync(path.dirname(config.filename), { recursive: true });
    return knexFactory({
      ...logging,
      client: CachingBetterSqlite3Client as unknown as typeof knexFactory.Client,
      connection: { filename: config.filename },
      useNullAsDefault: true,
      ...NO_VALUES_IN_ERRORS,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: { pragma(s: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
          // WAL lets readers proceed during a write; NORMAL sync survives a process crash (the
          // WAL is fsynced at checkpoints), which is what "never lose an acknowledged write" needs.
          conn.pragma('journal_mode = WAL');
          conn.pragma('synchronous = NORMAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        },
      },
    });
  }
  return knexFactory({
    ...logging,
    client: 'pg',
    connection: { connectionString: config.connectionString },
    searchPath: config.schema ? [config.schema] : undefined,
    pool: {
      min: 0,
      max: config.poolMax,
      // Before the connection's first use: its backend keeps its heap between transactions.
      afterCreate(conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) {
        void keepHeap(conn).then(() => done(null, conn));
      },
    },
    acquireConnectionTimeout: 10_000,
    ...NO_VALUES_IN_ERRORS,
  });
}

export function isSqlite(db: Db): boolean {
  return (db.client as { dialect?: string }).dialect === 'sqlite3';
}

/** True for a unique-constraint violation on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  if (!e) return false;
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Booleans come back as 0/1 from SQLite and true/false from PostgreSQL. */
export const bool = (v: unknown): boolean => v === true || v === 1 || v === '1';
