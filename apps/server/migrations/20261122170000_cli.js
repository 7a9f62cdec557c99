// CLI issue: login sessions (5-minute life, token handed out once), login tokens, the hourly
// synthetic-chain cap as an atomic counter, and test-flagged fixture partners and links.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('cli_login_sessions', (t) => {
    t.increments('id');
    t.string('state_hash', 64).notNullable().unique();
    // pending → complete (callback) → consumed (token handed out once)
    t.string('status', 16).notNullable().defaultTo('pending');
    t.integer('account_id').references('accounts.id').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('completed_at');
    t.bigInteger('consumed_at');
  });
  await knex.schema.createTable('cli_tokens', (t) => {
    t.increments('id');
    t.string('token_hash', 64).notNullable().unique();
    // No foreign key: a token whose account was deleted answers `User not found` (7.6), not "invalid".
    t.integer('account_id').notNullable().index();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
  });
  await knex.schema.createTable('chain_counters', (t) => {
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    t.bigInteger('window_start').notNullable();
    t.integer('count').notNullable();
    t.primary(['program_id', 'window_start']);
  });
  await knex.schema.alterTable('partners', (t) => {
    t.boolean('is_test').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('referral_links', (t) => {
    t.boolean('is_test').notNullable().defaultTo(false);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('referral_links', (t) => t.dropColumn('is_test'));
  await knex.schema.alterTable('partners', (t) => t.dropColumn('is_test'));
  await knex.schema.dropTableIfExists('chain_counters');
  await knex.schema.dropTableIfExists('cli_tokens');
  await knex.schema.dropTableIfExists('cli_login_sessions');
}
