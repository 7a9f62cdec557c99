/**
 * The database a test run uses: TEST_DB=sqlite (a fresh file per server) or TEST_DB=postgres (a fresh
 * schema per server in database `test`, dropped at the end). With CI=true an unreachable PostgreSQL
 * fails the run instead of skipping it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { findTestPostgres } from '../postgres-url.mjs';

export type DbKind = 'sqlite' | 'postgres';
export const dbKind: DbKind = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

let pgUrl: Promise<string | undefined> | undefined;

export function postgresUrl(): Promise<string | undefined> {
  pgUrl ??= (async () => {
    const url = await findTestPostgres();
    if (!url && process.env.CI === 'true') throw new Error('PostgreSQL at 127.0.0.1:5432 (database test) is unreachable and CI=true');
    return url;
  })();
  return pgUrl;
}

export interface TestDatabase {
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh SQLite file or PostgreSQL schema; `kind` defaults to this run's TEST_DB. */
export async function createTestDatabase(kind: DbKind = dbKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-test-'));
    return { url: `sqlite:${path.join(dir, 'test.db')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const base = await postgresUrl();
  if (!base) throw new Error('PostgreSQL unavailable');
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return {
    url: `${base}?schema=${schema}`,
    schema,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}
