// The stats rollups' buckets still being written (docs/analytics.md, "Recent and settled rows").
//
// - stats_rollups_recent: the same columns and key as stats_rollups. The stats consumers add to it;
//   once a row's hour, day or month has ended, the stats thread moves it into stats_rollups
//   (src/db/stats-rollups-recent.ts), and the stats API reads both tables.
//
// Why a table of its own: stats_rollups keeps its counters in its primary key's index (PostgreSQL
// INCLUDE, SQLite WITHOUT ROWID) so that a year of rows is an index-only read. On PostgreSQL that
// makes every increment a new row version and a new entry in both indexes (an update that changes
// an indexed column is never HOT), about half of PostgreSQL's work per lead (docs/performance.md,
// "Recent rollup rows"). Here the key alone is indexed and every page keeps half its space free
// (fillfactor 50), so an increment rewrites the row in place on its page (a HOT update). The table
// holds only the current hour's, day's and month's rows, which the stats API reads a handful of.

import { COUNTERS, KEY, ROLLUP_TABLE_COLUMNS } from './20261125160000_stats_rollups.js';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  // The column types and order of stats_rollups: the reads union the two tables.
  if (knex.client.dialect === 'postgresql') {
    await knex.raw(`create table stats_rollups_recent (${ROLLUP_TABLE_COLUMNS}, constraint stats_rollups_recent_pkey primary key (${KEY.join(', ')})) with (fillfactor = 50)`);
  } else {
    await knex.raw(`create table stats_rollups_recent (${ROLLUP_TABLE_COLUMNS}, constraint stats_rollups_recent_pkey primary key (${KEY.join(', ')})) without rowid`);
  }
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  // Nothing counted is lost: the recent rows are added to the settled ones first.
  const all = [...KEY, ...COUNTERS].join(', ');
  const add = COUNTERS.map((c) => `${c} = stats_rollups.${c} + excluded.${c}`).join(', ');
  // `where true`: SQLite's grammar needs a WHERE before ON CONFLICT in INSERT … SELECT.
  await knex.raw(`insert into stats_rollups (${all}) select ${all} from stats_rollups_recent where true order by ${KEY.join(', ')} on conflict (${KEY.join(', ')}) do update set ${add}`);
  await knex.schema.dropTable('stats_rollups_recent');
}
