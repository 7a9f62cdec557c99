// PostgreSQL: the click batch function plans its statements once, generically, instead of for
// every batch's arrays. Its statements read `unnest` of array parameters; the plan cache compares
// the generic plan (which assumes 100 rows per array) with plans made for each call's values
// (which count them), finds the latter cheaper every time, and so planned each statement of every
// batch again: about 8% of PostgreSQL's CPU per click (docs/performance.md, "The PostgreSQL click
// batch plans once"). The generic plans are the same plans: function scans into inserts, counter
// rows by primary key. A setting of the function, not of the connection, so that it holds through
// any pooler (PgBouncer drops or refuses startup `options`) and changes no other statement's plans.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw('alter function reftrack_record_clicks_v3 set plan_cache_mode = force_generic_plan');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw('alter function reftrack_record_clicks_v3 reset plan_cache_mode');
}
