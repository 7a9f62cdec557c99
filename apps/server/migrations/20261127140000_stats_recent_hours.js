// The recent rollup rows become hours only (docs/analytics.md, "Recent and settled rows"): the stats
// consumers write a recent hour's row alone, the stats API reads it as its day's and month's rows
// too, and the stats thread adds it to its settled hour, day and month once the hour has ended. A
// stats pass so writes a third of the rows (docs/performance.md, "Recent rows are hours").
//
// No column changes. `up` adds the recent day and month rows that the release before wrote to the
// settled rows of their keys (settled rows may now hold part of a day or month; every read sums the
// two tables), so that what is recent is hours only. `down` gives the release before what it reads:
// each recent hour added to recent rows of its day and month.

import { COUNTERS, KEY } from './20261125160000_stats_rollups.js';

const ALL = [...KEY, ...COUNTERS].join(', ');
const add = (table) => `on conflict (${KEY.join(', ')}) do update set ${COUNTERS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`;

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  // `where true`: SQLite's grammar needs a WHERE before ON CONFLICT in INSERT … SELECT.
  await knex.raw(`insert into stats_rollups (${ALL}) select ${ALL} from stats_rollups_recent where span <> 1 order by ${KEY.join(', ')} ${add('stats_rollups')}`);
  await knex('stats_rollups_recent').whereNot('span', 1).del();
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  const sqlite = knex.client.dialect !== 'postgresql';
  // The first hour of the hour's UTC month (src/db/stats-buckets.ts, MONTH_SPAN 720).
  const month = sqlite
    ? `cast(strftime('%s', bucket * 3600, 'unixepoch', 'start of month') as integer) / 3600`
    : `cast(extract(epoch from date_trunc('month', to_timestamp(bucket::int8 * 3600) at time zone 'UTC')) / 3600 as int4)`;
  const sums = COUNTERS.map((c) => (sqlite ? `sum(${c})` : `cast(sum(${c}) as int8)`)).join(', ');
  const rest = 'dim, partner_id, link_id, value';
  for (const [span, bucket] of [
    [24, 'bucket - bucket % 24'],
    [720, month],
  ]) {
    await knex.raw(
      `insert into stats_rollups_recent (${ALL}) select program_id, ${span}, ${rest}, b, currency, ${sums} from (select program_id, ${rest}, ${bucket} as b, currency, ${COUNTERS.join(', ')} from stats_rollups_recent where span = 1) as hours where true group by program_id, ${rest}, b, currency ${add('stats_rollups_recent')}`,
    );
  }
}
