// Sign-in with a real identity provider (issue 17): an account is bound to its provider's
// (issuer, subject) at first sign-in, so a later e-mail change at the provider never moves a
// person to another account; accounts from before this release have no row and are bound at their
// next sign-in. A CLI login session records the device that started it (its User-Agent, which the
// CLI fills with its host name, and the address), shown on the confirmation page of the browser leg.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('account_identities', (t) => {
    t.increments('id');
    t.integer('account_id').notNullable().references('accounts.id').onDelete('CASCADE').index();
    // The `iss` claim exactly as the provider signs it (trailing slash and all).
    t.string('issuer', 500).notNullable();
    t.string('subject', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['issuer', 'subject']);
  });
  await knex.schema.alterTable('cli_login_sessions', (t) => {
    t.string('device', 200);
    t.string('started_from', 64);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('cli_login_sessions', (t) => {
    t.dropColumn('started_from');
    t.dropColumn('device');
  });
  await knex.schema.dropTableIfExists('account_identities');
}
