import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../src/db/knex.js';
import { parseDatabaseUrl } from '../src/config.js';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

// The SQLite client only; the PostgreSQL pass has nothing of it to run.
describe.runIf(dbKind === 'sqlite')('[sqlite] knex client: LIMIT is written into the SQL', () => {
  let database: TestDatabase;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    db = createDb(parseDatabaseUrl(database.url));
    await db.schema.createTable('numbers', (t) => {
      t.integer('n').primary();
    });
    await db('numbers').insert([1, 2, 3, 4, 5].map((n) => ({ n })));
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('`.first()` compiles to `limit 1`, with no parameter for the limit', () => {
    const query = db('numbers').where('n', '>', 2).orderBy('n').first('n').toSQL();
    expect(query.sql).toBe('select `n` from `numbers` where `n` > ? order by `n` asc limit 1');
    expect(query.bindings).toEqual([2]);
  });

  it('`.limit(n)` is written as a number; an offset stays a parameter', () => {
    const withOffset = db('numbers').orderBy('n').limit(2).offset(1).toSQL();
    expect(withOffset.sql).toBe('select * from `numbers` order by `n` asc limit 2 offset ?');
    expect(withOffset.bindings).toEqual([1]);
    const offsetOnly = db('numbers').orderBy('n').offset(3).toSQL();
    expect(offsetOnly.sql).toBe('select * from `numbers` order by `n` asc limit -1 offset ?');
  });

  it('a limit that is not an integer never reaches the SQL', () => {
    expect(db('numbers').limit('1; drop table numbers' as unknown as number).toSQL().sql).toBe('select * from `numbers` limit 1');
  });

  it('the rows are the same as with a bound limit', async () => {
    expect(await db('numbers').orderBy('n', 'desc').first('n')).toEqual({ n: 5 });
    expect(await db('numbers').orderBy('n').limit(2).offset(1).pluck('n')).toEqual([2, 3]);
    expect(await db('numbers').orderBy('n').offset(3).pluck('n')).toEqual([4, 5]);
    expect(await db('numbers').orderBy('n').limit(0).pluck('n')).toEqual([]);
    // Different limits are different statements in the statement cache: each gives its own rows.
    expect(await db('numbers').orderBy('n').limit(3).pluck('n')).toEqual([1, 2, 3]);
    expect(await db('numbers').orderBy('n').limit(1).pluck('n')).toEqual([1]);
  });
});
