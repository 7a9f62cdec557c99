import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex.js';
import { migrateDown, migrateLatest, migrationConfig } from '../src/db/migrate.js';
import { parseDatabaseUrl } from '../src/config.js';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

let database: TestDatabase | undefined;
let recentDatabase: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
  await recentDatabase?.drop();
});

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
  it('20261127090000 (recent rollup rows): down adds each recent row to the settled row of its key before the table goes', async () => {
    recentDatabase = await createTestDatabase();
    const config = parseDatabaseUrl(recentDatabase.url);
    const db = createDb(config);
    const schema = config.client === 'postgres' ? config.schema : undefined;
    const key = { program_id: 1, span: 1, dim: '', partner_id: 0, link_id: 0, value: '', currency: '' };
    try {
      await migrateLatest(db, schema);
      await db('stats_rollups').insert([{ ...key, bucket: 10, clicks: 2, leads: 1 }]);
      await db('stats_rollups_recent').insert([{ ...key, bucket: 10, clicks: 3 }, { ...key, bucket: 11, clicks: 4 }]);
      await db.migrate.down({ ...migrationConfig(schema), name: '20261127090000_stats_rollups_recent.js' });
      expect(await db.schema.hasTable('stats_rollups_recent')).toBe(false);
      const rows = await db('stats_rollups').orderBy('bucket').select('bucket', 'clicks', 'leads');
      expect(rows.map((r: { bucket: number; clicks: number; leads: number }) => [Number(r.bucket), Number(r.clicks), Number(r.leads)])).toEqual([
        [10, 5, 1],
        [11, 4, 0],
      ]);
      await migrateLatest(db, schema);
      expect(await db.schema.hasTable('stats_rollups_recent')).toBe(true);
    } finally {
      await db.destroy();
    }
  });
});
