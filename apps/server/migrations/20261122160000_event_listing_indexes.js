// Event listing (4.6): each type is read newest-first for one program, excluding test events,
// LIMIT 3 x pageSize. These indexes serve that read directly (no sort), ties broken by id.

const INDEXES = [
  ['click_events', 'click_timestamp', 'click_events_listing_idx', ['program_id', 'is_test', 'click_timestamp']],
  ['lead_events', 'lead_timestamp', 'lead_events_listing_idx', ['program_id', 'is_test', 'lead_timestamp']],
  ['sale_events', 'sale_date', 'sale_events_listing_idx', ['program_id', 'is_test', 'sale_date']],
];

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  for (const [table, time, name, old] of INDEXES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex(old);
      t.index(['program_id', 'is_test', time, 'id'], name);
    });
  }
  await knex.schema.alterTable('lead_events', (t) => t.index(['customer_id', 'provisional']));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('lead_events', (t) => t.dropIndex(['customer_id', 'provisional']));
  for (const [table, , name, old] of INDEXES) {
    await knex.schema.alterTable(table, (t) => {
      t.dropIndex([], name);
      t.index(old);
    });
  }
}
