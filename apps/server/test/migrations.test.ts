import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex.js';
import { migrateDown, migrateLatest } from '../src/db/migrate.js';
import { parseDatabaseUrl } from '../src/config.js';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

let database: TestDatabase | undefined;
afterAll(() => database?.drop());

describe(`[${dbKind}] migrations`, () => {
  it('run up, down to nothing, and up again', async () => {
    database = await createTestDatabase();
    const config = parseDatabaseUrl(database.url);
    const db = createDb(config);
    const schema = config.client === 'postgres' ? config.schema : undefined;
    try {
      await migrateLatest(db, schema);
      expect(await db.schema.hasTable('click_events')).toBe(true);
      await migrateDown(db, schema);
      expect(await db.schema.hasTable('click_events')).toBe(false);
      expect(await db.schema.hasTable('programs')).toBe(false);
      await migrateLatest(db, schema);
      expect(await db.schema.hasTable('sale_events')).toBe(true);
    } finally {
      await db.destroy();
    }
  });
});
