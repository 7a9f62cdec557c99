// Tracking log entries are pruned by age (TRACKING_LOG_RETENTION_DAYS): an index on their time lets
// each batch find the oldest rows without reading the table.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('tracking_logs', (t) => t.index(['created_at'], 'tracking_logs_created_at_idx'));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('tracking_logs', (t) => t.dropIndex(['created_at'], 'tracking_logs_created_at_idx'));
}
