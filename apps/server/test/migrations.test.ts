import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../src/db/knex.js';
import { migrateDown, migrateLatest, migrationConfig } from '../src/db/migrate.js';
import { parseDatabaseUrl } from '../src/config.js';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

let database: TestDatabase | undefined;
let recentDatabase: TestDatabase | undefined;
let hoursDatabase: TestDatabase | undefined;
let plansDatabase: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
  await recentDatabase?.drop();
  await hoursDatabase?.drop();
  await plansDatabase?.drop();
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
  it('20261127140000 (recent rows are hours): down adds each recent hour to recent rows of its day and month; up adds those to the settled rows', async () => {
    hoursDatabase = await createTestDatabase();
    const config = parseDatabaseUrl(hoursDatabase.url);
    const db = createDb(config);
    const schema = config.client === 'postgres' ? config.schema : undefined;
    const key = { program_id: 1, dim: '', partner_id: 0, link_id: 0, value: '', currency: '' };
    // 2026-02-28 22:00 and 23:00 UTC, and 2026-03-01 00:00: two days, two months.
    const hour = Date.UTC(2026, 1, 28, 22) / 3_600_000;
    const rows = async (table: string) =>
      (await db(table).orderBy(['span', 'bucket']).select('span', 'bucket', 'clicks')).map((r: { span: number; bucket: number; clicks: number }) => [Number(r.span), Number(r.bucket), Number(r.clicks)]);
    try {
      await migrateLatest(db, schema);
      await db('stats_rollups_recent').insert([0, 1, 2].map((i) => ({ ...key, span: 1, bucket: hour + i, clicks: i + 1 })));
      await db.migrate.down({ ...migrationConfig(schema), name: '20261127140000_stats_recent_hours.js' });
      const day = hour - (hour % 24);
      const march = Date.UTC(2026, 2, 1) / 3_600_000;
      const february = Date.UTC(2026, 1, 1) / 3_600_000;
      expect(await rows('stats_rollups_recent')).toEqual([
        [1, hour, 1],
        [1, hour + 1, 2],
        [1, hour + 2, 3],
        [24, day, 3],
        [24, march, 3],
        [720, february, 3],
        [720, march, 3],
      ]);
      await migrateLatest(db, schema);
      expect(await rows('stats_rollups_recent')).toEqual([
        [1, hour, 1],
        [1, hour + 1, 2],
        [1, hour + 2, 3],
      ]);
      expect(await rows('stats_rollups')).toEqual([
        [24, day, 3],
        [24, march, 3],
        [720, february, 3],
        [720, march, 3],
      ]);
    } finally {
      await db.destroy();
    }
  });
  it.runIf(dbKind === 'postgres')('20261129120000 (the click batch plans once): the batch function plans its statements generically; down takes the setting away', async () => {
    plansDatabase = await createTestDatabase();
    const config = parseDatabaseUrl(plansDatabase.url);
    const db = createDb(config);
    const schema = config.client === 'postgres' ? config.schema : undefined;
    const settings = async () =>
      (
        await db.raw(`select proconfig from pg_proc p join pg_namespace n on n.oid = p.pronamespace where p.proname = 'reftrack_record_clicks_v3' and n.nspname = current_schema()`)
      ).rows.map((r: { proconfig: string[] | null }) => r.proconfig);
    try {
      await migrateLatest(db, schema);
      expect(await settings()).toEqual([['plan_cache_mode=force_generic_plan']]);
      await db.migrate.down({ ...migrationConfig(schema), name: '20261129120000_pg_click_batch_generic_plans.js' });
      expect(await settings()).toEqual([null]);
      await migrateLatest(db, schema);
      expect(await settings()).toEqual([['plan_cache_mode=force_generic_plan']]);
    } finally {
      await db.destroy();
    }
  });
});
