// PostgreSQL only: one function that writes a whole click batch — the customers, the events and the
// summed counters — so that the click writer thread (src/db/postgres-click-writer.worker.mjs) needs
// one round trip per batch instead of six (begin, two inserts, two updates, commit). The call is
// one statement, so it commits or rolls back as a whole. Its parameters are the columns of
// CUSTOMER_COLUMNS and CLICK_EVENT_COLUMNS (src/db/click-batcher.ts) in that order, as arrays.

// Exported for the later versions of the function (20261124140000), which take the same columns.
export const CUSTOMER = [
  ['click_id', 'text'],
  ['program_id', 'int4'],
  ['partner_id', 'int4'],
  ['link_id', 'int4'],
  ['status', 'text'],
  ['is_test', 'bool'],
  ['click_at', 'int8'],
  ['created_at', 'int8'],
];
export const EVENT = [
  ['program_id', 'int4'],
  ['link_id', 'int4'],
  ['partner_id', 'int4'],
  ['click_id', 'text'],
  ['is_test', 'bool'],
  ['session_id', 'text'],
  ['page_url', 'text'],
  ['page_title', 'text'],
  ['referrer_url', 'text'],
  ['screen_resolution', 'text'],
  ['viewport_size', 'text'],
  ['language', 'text'],
  ['timezone', 'text'],
  ['user_agent', 'text'],
  ['geo_country', 'text'],
  ['geo_region', 'text'],
  ['geo_city', 'text'],
  ['device_type', 'text'],
  ['device_os', 'text'],
  ['browser_name', 'text'],
  ['click_timestamp', 'int8'],
  ['created_at', 'int8'],
];

export const params = (prefix, columns) => columns.map(([name, type]) => `${prefix}_${name} ${type}[]`);
export const names = (columns) => columns.map(([name]) => name).join(', ');
export const args = (prefix, columns) => columns.map(([name]) => `${prefix}_${name}`).join(', ');

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw(`
    create function reftrack_record_clicks(
      ${[...params('c', CUSTOMER), ...params('e', EVENT), 'l_id int4[]', 'l_n int8[]', 'l_at int8[]', 'p_partner_id int4[]', 'p_program_id int4[]', 'p_n int8[]', 'p_at int8[]'].join(',\n      ')}
    ) returns void language plpgsql as $body$
    begin
      insert into customers (${names(CUSTOMER)}) select * from unnest(${args('c', CUSTOMER)});
      insert into click_events (${names(EVENT)}) select * from unnest(${args('e', EVENT)});
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
  await knex.raw('drop function reftrack_record_clicks');
}
