// Every click inserts a customer and a click event, so each index on those tables is paid on the
// hot path. Lookup columns that a new click leaves NULL (customer key, e-mail, processor customer)
// get partial indexes that such rows never enter; click_events.click_id had no reader.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('customers', (t) => {
    t.dropIndex(['program_id', 'customer_key']);
    t.dropIndex(['customer_key']);
    t.dropIndex(['program_id', 'email']);
    t.dropIndex(['processor_customer_id']);
  });
  await knex.schema.alterTable('customers', (t) => {
    t.index(['customer_key', 'program_id'], 'customers_customer_key_partial', { predicate: knex.whereNotNull('customer_key') });
    t.index(['program_id', 'email'], 'customers_email_partial', { predicate: knex.whereNotNull('email') });
    t.index(['processor_customer_id'], 'customers_processor_customer_partial', { predicate: knex.whereNotNull('processor_customer_id') });
  });
  await knex.schema.alterTable('click_events', (t) => t.dropIndex(['click_id']));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('click_events', (t) => t.index(['click_id']));
  await knex.schema.alterTable('customers', (t) => {
    t.dropIndex([], 'customers_customer_key_partial');
    t.dropIndex([], 'customers_email_partial');
    t.dropIndex([], 'customers_processor_customer_partial');
  });
  await knex.schema.alterTable('customers', (t) => {
    t.index(['program_id', 'customer_key']);
    t.index(['customer_key']);
    t.index(['program_id', 'email']);
    t.index(['processor_customer_id']);
  });
}
