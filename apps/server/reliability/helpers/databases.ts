/** A fresh database per reliability test: a SQLite file, or a PostgreSQL schema dropped afterwards. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresUrl } from '../../test/helpers/databases.js';
import { createDb } from '../../src/db/knex.js';
import { parseDatabaseUrl } from '../../src/config.js';

export interface Database {
  kind: 'sqlite' | 'postgres';
  url: string;
  /** For PostgreSQL: the server URL without the schema, and the schema. */
  base?: string;
  schema?: string;
  drop(): Promise<void>;
}

export async function freshDatabase(kind: 'sqlite' | 'postgres'): Promise<Database> {
  if (kind === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-rel-db-'));
    return { kind, url: `sqlite:${path.join(dir, 'rel.db')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const base = await postgresUrl();
  if (!base) throw new Error('PostgreSQL unavailable');
  const schema = `rel_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  return {
    kind,
    url: `${base}?schema=${schema}`,
    base,
    schema,
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}

/** Reads rows straight from the database, outside the servers under test. */
export async function query<T = Record<string, unknown>>(db: Database, sql: string): Promise<T[]> {
  const knex = createDb(parseDatabaseUrl(db.url));
  try {
    const result = await knex.raw(sql);
    return (Array.isArray(result) ? result : result.rows) as T[];
  } finally {
    await knex.destroy();
  }
}
