// Hardening issue: CLI login tokens can be revoked (`reftrack logout`, the dashboard, the operator)
// and carry what lets a person recognise them; agent keys and login tokens record when they were
// last used (at most once a minute); id_tokens are single-use (used_id_tokens, kept until the
// token's own expiry); the pruning job finds expired rows through indexes on expires_at.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('cli_tokens', (t) => {
    t.bigInteger('revoked_at');
    t.bigInteger('last_used_at');
    // The User-Agent of the poll that received the token, cut to 200 characters.
    t.string('label', 200);
    t.index(['expires_at']);
  });
  await knex.schema.alterTable('agent_keys', (t) => {
    t.bigInteger('last_used_at');
    t.index(['workspace_id']);
  });
  await knex.schema.createTable('used_id_tokens', (t) => {
    // SHA-256 hex of the issuer and `jti`, or of the whole token when it has no `jti`.
    t.string('use_key', 64).primary();
    t.bigInteger('used_at').notNullable();
    t.bigInteger('expires_at').notNullable().index();
  });
  await knex.schema.alterTable('cli_login_sessions', (t) => t.index(['expires_at']));
  await knex.schema.alterTable('dashboard_sessions', (t) => t.index(['expires_at']));
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('dashboard_sessions', (t) => t.dropIndex(['expires_at']));
  await knex.schema.alterTable('cli_login_sessions', (t) => t.dropIndex(['expires_at']));
  await knex.schema.dropTableIfExists('used_id_tokens');
  await knex.schema.alterTable('agent_keys', (t) => {
    t.dropIndex(['workspace_id']);
    t.dropColumn('last_used_at');
  });
  await knex.schema.alterTable('cli_tokens', (t) => {
    t.dropIndex(['expires_at']);
    t.dropColumn('label');
    t.dropColumn('last_used_at');
    t.dropColumn('revoked_at');
  });
}
