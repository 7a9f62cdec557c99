// PostgreSQL only: version 2 of the click batch function (20261122200000), which also appends the
// batch's domain events — one `clicks.recorded` row of outbox_events per program — in the same
// statement, so a batch's clicks and its events commit or roll back together. The click writer
// thread (src/db/postgres-click-writer.worker.mjs) calls this version. Version 1 stays, so that a
// server of the previous release still running during a deploy keeps writing its clicks.
//
// Parameters: the columns of CUSTOMER_COLUMNS and CLICK_EVENT_COLUMNS (src/db/click-rows.ts) in
// that order, the link and partner-program increments, then the outbox rows' columns
// (CLICK_OUTBOX_COLUMNS), all as arrays. Each outbox row's workspace_id is its program's, and its
// txid the column's default (this transaction's id; see 20261124120000_outbox_and_audit_log.js).

import { args, CUSTOMER, EVENT, names, params } from './20261122200000_pg_click_batch_function.js';

const OUTBOX = [
  ['event_id', 'text'],
  ['type', 'text'],
  ['version', 'int2'],
  ['program_id', 'int4'],
  ['payload', 'text'],
  ['occurred_at', 'int8'],
];

const SIGNATURE = [
  ...params('c', CUSTOMER),
  ...params('e', EVENT),
  'l_id int4[]',
  'l_n int8[]',
  'l_at int8[]',
  'p_partner_id int4[]',
  'p_program_id int4[]',
  'p_n int8[]',
  'p_at int8[]',
  ...params('o', OUTBOX),
];

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw(`
    create function reftrack_record_clicks_v2(
      ${SIGNATURE.join(',\n      ')}
    ) returns void language plpgsql as $body$
    begin
      insert into customers (${names(CUSTOMER)}) select * from unnest(${args('c', CUSTOMER)});
      insert into click_events (${names(EVENT)}) select * from unnest(${args('e', EVENT)});
      -- Before the counters: the rows they lock are then held for less time.
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
    end
    $body$`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw('drop function reftrack_record_clicks_v2');
}
