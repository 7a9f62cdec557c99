import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/knex.js';
import { insertId } from '../src/db/insert-id.js';
import { parseDatabaseUrl } from '../src/config.js';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

describe(`[${dbKind}] insertId: one row in, its id out`, () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDb(parseDatabaseUrl(database.url));
    await db.schema.createTable('things', (t) => {
      t.increments('id');
      t.string('name').notNullable().unique();
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('answers the id of the row it inserted, as a number', async () => {
    const first = await insertId(db, 'things', { name: 'a' });
    const second = await insertId(db, 'things', { name: 'b' });
    expect(typeof first).toBe('number');
    expect(second).not.toBe(first);
    expect(await db('things').where({ id: first }).first('name')).toEqual({ name: 'a' });
    expect(await db('things').where({ id: second }).first('name')).toEqual({ name: 'b' });
  });

  it('inside a transaction, the id is that of the transaction’s row', async () => {
    const id = await db.transaction(async (trx) => {
      await trx('things').insert({ name: 'c' });
      return insertId(trx, 'things', { name: 'd' });
    });
    expect(await db('things').where({ id }).first('name')).toEqual({ name: 'd' });
  });

  it('a refused insert throws and adds nothing', async () => {
    const before = await db('things').count({ n: '*' }).first();
    await expect(insertId(db, 'things', { name: 'a' })).rejects.toThrow();
    expect(await db('things').count({ n: '*' }).first()).toEqual(before);
  });
});
