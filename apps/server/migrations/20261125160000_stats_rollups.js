// Analytics (docs/analytics.md): bot clicks are flagged on their row, and the stats API reads
// rollup rows instead of scanning events.
//
// - click_events.is_bot: the click's user agent is a known bot, crawler or link-preview fetcher.
// - stats_rollups: counters per program, UTC hour (span 1) or UTC day (span 24), partner, link,
//   dimension value and currency. Kept up to date by the click batch (one upsert per batch, in its
//   transaction) and by the lead, sale and refund units of work (in theirs). See
//   src/db/stats-rollups.ts for the levels written.
// - PostgreSQL: version 3 of the click batch function (20261124140000), which takes the bot flag
//   as the last event column and the batch's rollup rows. Version 2 stays for a server of the
//   previous release still running during a deploy.

import { args, CUSTOMER, EVENT, names, params } from './20261122200000_pg_click_batch_function.js';

const EVENT_V3 = [...EVENT, ['is_bot', 'bool']];
const OUTBOX = [
  ['event_id', 'text'],
  ['type', 'text'],
  ['version', 'int2'],
  ['program_id', 'int4'],
  ['payload', 'text'],
  ['occurred_at', 'int8'],
];
// The key and the click counters of a rollup row, in the order of ROLLUP_CLICK_COLUMNS (src/db/click-rows.ts).
const ROLLUP = [
  ['program_id', 'int4'],
  ['span', 'int2'],
  ['bucket', 'int4'],
  ['partner_id', 'int4'],
  ['link_id', 'int4'],
  ['dim', 'text'],
  ['value', 'text'],
  ['currency', 'text'],
  ['clicks', 'int8'],
  ['unique_clicks', 'int8'],
  ['bot_clicks', 'int8'],
];
export const KEY = ['program_id', 'span', 'dim', 'partner_id', 'link_id', 'value', 'bucket', 'currency'];
export const COUNTERS = ['clicks', 'unique_clicks', 'bot_clicks', 'leads', 'sales', 'revenue_cents', 'refunds', 'refunded_cents'];

// The key's columns first, in this order: a series or a breakdown reads one contiguous range of
// the key. The counters are read with the key — stored in the key's B-tree on SQLite (WITHOUT
// ROWID) and included in the primary key's index on PostgreSQL (index-only scans) — so a year of
// rows is one sequential read, not a random read per row (docs/analytics.md "How far it scales").
//   program_id; span: 1 an hour, 24 a day; dim: '' on the partner-and-link rows, else the
//   dimension (country, …); partner_id, link_id: 0 on the program-wide rows; value: the
//   dimension's value ('' when unknown); currency: '' on click and lead counters, a sale's
//   currency on its counters; bucket: the first hour since the epoch (UTC) of the span.
export const ROLLUP_TABLE_COLUMNS = `
    program_id integer not null,
    span smallint not null,
    dim varchar(16) not null,
    partner_id integer not null,
    link_id integer not null,
    value varchar(255) not null,
    currency varchar(3) not null,
    bucket integer not null,
    ${COUNTERS.map((c) => `${c} bigint not null default 0`).join(',\n    ')}`;

const SIGNATURE = [
  ...params('c', CUSTOMER),
  ...params('e', EVENT_V3),
  'l_id int4[]',
  'l_n int8[]',
  'l_at int8[]',
  'p_partner_id int4[]',
  'p_program_id int4[]',
  'p_n int8[]',
  'p_at int8[]',
  ...params('o', OUTBOX),
  ...params('r', ROLLUP),
];

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('click_events', (t) => {
    t.boolean('is_bot').notNullable().defaultTo(false);
  });
  if (knex.client.dialect === 'postgresql') {
    await knex.raw(`create table stats_rollups (${ROLLUP_TABLE_COLUMNS}, constraint stats_rollups_pkey primary key (${KEY.join(', ')}) include (${COUNTERS.join(', ')}))`);
  } else {
    await knex.raw(`create table stats_rollups (${ROLLUP_TABLE_COLUMNS}, constraint stats_rollups_pkey primary key (${KEY.join(', ')})) without rowid`);
  }
  // A breakdown reads all values of a dimension over a few buckets (a range's ragged hours and
  // days): this index finds them by time; the primary key finds a series of one value.
  await knex.raw('create index stats_rollups_by_time on stats_rollups (program_id, span, dim, partner_id, link_id, bucket)');
  if (knex.client.dialect !== 'postgresql') return;
  const counters = ROLLUP.slice(KEY.length).map(([name]) => `${name} = stats_rollups.${name} + excluded.${name}`);
  await knex.raw(`
    create function reftrack_record_clicks_v3(
      ${SIGNATURE.join(',\n      ')}
    ) returns void language plpgsql as $body$
    begin
      insert into customers (${names(CUSTOMER)}) select * from unnest(${args('c', CUSTOMER)});
      insert into click_events (${names(EVENT_V3)}) select * from unnest(${args('e', EVENT_V3)});
      insert into outbox_events (${names(OUTBOX)}, workspace_id)
        select o.*, (select p.workspace_id from programs p where p.id = o.program_id)
        from unnest(${args('o', OUTBOX)}) as o(${names(OUTBOX)});
      -- One row at a time, in the order the caller sorted them: two batches always lock the
      -- counter rows in the same order, so they wait for each other and never deadlock.
      for i in 1 .. coalesce(array_length(l_id, 1), 0) loop
        update referral_links set clicks = clicks + l_n[i], last_clicked = greatest(coalesce(last_clicked, 0), l_at[i]) where id = l_id[i];
      end loop;
      for i in 1 .. coalesce(array_length(p_partner_id, 1), 0) loop
        update partner_programs set clicks = clicks + p_n[i], last_clicked_at = greatest(coalesce(last_clicked_at, 0), p_at[i])
          where partner_id = p_partner_id[i] and program_id = p_program_id[i];
      end loop;
      -- Last, like the lead and sale units of work, and in the key order the caller sorted them
      -- (summed per key, so each key appears once): no two writers lock rollup rows in opposite orders.
      insert into stats_rollups (${names(ROLLUP)})
        select * from unnest(${args('r', ROLLUP)})
        on conflict (${KEY.join(', ')}) do update set ${counters.join(', ')};
    end
    $body$`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  if (knex.client.dialect === 'postgresql') await knex.raw('drop function reftrack_record_clicks_v3');
  await knex.schema.dropTable('stats_rollups');
  await knex.schema.alterTable('click_events', (t) => {
    t.dropColumn('is_bot');
  });
}
