/** The Knex instance for SQLite (embedded default) or PostgreSQL. */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { CachingBetterSqlite3Client } from './sqlite-client.js';
import type { DatabaseConfig } from '../config.js';

// Epoch-millisecond columns are bigint; node-pg returns int8 as strings unless told otherwise.
// Values stay far below 2^53, so a Number is exact.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export type Db = Knex;

export function createDb(config: DatabaseConfig): Db {
  if (config.client === 'sqlite') {
    fs.mkdirSync(path.dirname(config.filename), { recursive: true });
    return knexFactory({
      client: CachingBetterSqlite3Client as unknown as typeof knexFactory.Client,
      connection: { filename: config.filename },
      useNullAsDefault: true,
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
    client: 'pg',
    connection: { connectionString: config.connectionString },
    searchPath: config.schema ? [config.schema] : undefined,
    pool: { min: 0, max: config.poolMax },
    acquireConnectionTimeout: 10_000,
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
