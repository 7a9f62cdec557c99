/**
 * Benchmark databases: a fresh SQLite file or a fresh PostgreSQL schema per run, and the counts
 * read back after each run to check that every acknowledged write was committed. Uses the server
 * package's own knex, pg and better-sqlite3 (no sqlite3 or psql binary needed).
 */
import crypto from 'node:crypto';
import path from 'node:path';
import knexFactory from 'knex';

/**
 * The first reachable PostgreSQL (`TEST_POSTGRES_URL`, then users postgres and root at
 * 127.0.0.1:5432, database `test`): the same probe as the server suite's.
 */
export { findTestPostgres as findPostgres } from '../test/postgres-url.mjs';

/**
 * @typedef {object} BenchDb
 * @property {'sqlite' | 'postgres'} kind
 * @property {string} databaseUrl   what the server gets as DATABASE_URL
 * @property {string} label         for the report (no secrets: trust auth)
 * @property {import('knex').Knex} knex  the benchmark's own connection, for counts
 * @property {() => Promise<void>} drop
 */

/**
 * @param {string} tmpDir
 * @returns {Promise<BenchDb>}
 */
export async function createSqlite(tmpDir) {
  const file = path.join(tmpDir, 'bench.db');
  const knex = knexFactory({ client: 'better-sqlite3', connection: { filename: file }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
  return {
    kind: 'sqlite',
    databaseUrl: `sqlite:${file}`,
    label: `sqlite:${file}`,
    knex,
    // The file goes with the temporary directory.
    drop: () => knex.destroy(),
  };
}

/**
 * A fresh schema `bench_<random>` in the given database; the server gets it with `?schema=`.
 * @param {string} baseUrl
 * @returns {Promise<BenchDb>}
 */
export async function createPostgres(baseUrl) {
  const schema = `bench_${crypto.randomBytes(5).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: { connectionString: baseUrl }, pool: { min: 0, max: 1 } });
  // The server's migrations create tables in the schema but not the schema itself.
  await admin.raw('create schema ??', [schema]);
  await admin.destroy();
  const knex = knexFactory({ client: 'pg', connection: { connectionString: baseUrl }, searchPath: [schema], pool: { min: 0, max: 2 } });
  return {
    kind: 'postgres',
    databaseUrl: `${baseUrl}?schema=${schema}`,
    label: `${baseUrl}?schema=${schema}`,
    knex,
    async drop() {
      await knex.raw('drop schema if exists ?? cascade', [schema]);
      await knex.destroy();
    },
  };
}

/**
 * @param {import('knex').Knex} knex
 * @param {string} table
 * @param {Record<string, unknown>} [where]
 * @returns {Promise<number>}
 */
export async function count(knex, table, where = {}) {
  const row = await knex(table).where(where).count({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

/**
 * Row counts of every table the tracked routes write.
 * @param {import('knex').Knex} knex
 */
export async function writeCounts(knex) {
  const [clickEvents, customers, leadEvents, leadCustomers, saleEvents, commissions, platformFees] = await Promise.all([
    count(knex, 'click_events'),
    count(knex, 'customers'),
    count(knex, 'lead_events'),
    count(knex, 'customers', { status: 'lead' }),
    count(knex, 'sale_events'),
    count(knex, 'commissions'),
    count(knex, 'platform_fees'),
  ]);
  const [{ clicks } = { clicks: 0 }] = await knex('referral_links').sum({ clicks: 'clicks' });
  return { clickEvents, customers, leadEvents, leadCustomers, saleEvents, commissions, platformFees, linkClicks: Number(clicks ?? 0) };
}

/**
 * Events each outbox consumer had not yet handled (after its cursor): read as a measured run
 * ends, it says whether the consumers kept up with the run or left work for later — work that the
 * run's rate does not pay for.
 * @param {import('knex').Knex} knex
 * @returns {Promise<Array<{ consumer: string, behind: number }>>}
 */
export async function outboxBehind(knex) {
  const pg = knex.client.config.client === 'pg';
  // A build from before the outbox (a --server-dir A/B against an old commit) has no cursors.
  if (!(await knex.schema.hasTable('outbox_cursors'))) return [];
  const cursors = await knex('outbox_cursors').select('consumer', 'last_txid', 'last_id');
  const out = [];
  for (const c of cursors) {
    const q = knex('outbox_events');
    if (pg) q.whereRaw('(txid, id) > (?, ?)', [Number(c.last_txid), Number(c.last_id)]);
    else q.where('id', '>', Number(c.last_id));
    out.push({ consumer: String(c.consumer), behind: Number((await q.count({ n: '*' }).first())?.n ?? 0) });
  }
  return out;
}
