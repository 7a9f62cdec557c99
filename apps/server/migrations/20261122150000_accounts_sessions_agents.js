// Accounts issue: dashboard sessions, agent keys, server settings (the development identity
// provider's signing secret), partners owned by a workspace.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('dashboard_sessions', (t) => {
    t.increments('id');
    t.string('token_hash', 64).notNullable().unique();
    t.integer('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['account_id']);
  });
  await knex.schema.createTable('agent_keys', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.string('key_hash', 64).notNullable().unique();
    t.string('key_last4', 8).notNullable();
    t.string('name', 200);
    t.text('scopes').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('revoked_at');
  });
  await knex.schema.createTable('server_settings', (t) => {
    t.string('name', 100).primary();
    t.text('value').notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.alterTable('partners', (t) => {
    t.integer('workspace_id').references('workspaces.id');
    t.index(['workspace_id']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('partners', (t) => {
    t.dropIndex(['workspace_id']);
    t.dropColumn('workspace_id');
  });
  await knex.schema.dropTableIfExists('server_settings');
  await knex.schema.dropTableIfExists('agent_keys');
  await knex.schema.dropTableIfExists('dashboard_sessions');
}
