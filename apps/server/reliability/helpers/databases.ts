/** A fresh database per reliability test: a SQLite file, or a PostgreSQL schema dropped afterwards. */
import { createTestDatabase } from '../../test/helpers/databases.js';
import { createDb } from '../../src/db/knex.js';
import { parseDatabaseUrl } from '../../src/config.js';

export interface Database {
  kind: 'sqlite' | 'postgres';
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

export async function freshDatabase(kind: 'sqlite' | 'postgres'): Promise<Database> {
  return { kind, ...(await createTestDatabase(kind)) };
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
