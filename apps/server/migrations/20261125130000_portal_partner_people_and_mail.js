// The partner portal (docs/partners.md):
// - portal_people: a person who signs in to the portal by e-mail (no identity provider);
// - partner_portal_access: which partner records (of any workspace) a person may see — one person,
//   several partners; one partner record, one person;
// - portal_invitations: an owner's invitation of a partner record, its link's token only as a hash;
// - portal_sign_in_tokens: one-time sign-in links (hash only, short-lived, single use);
// - portal_sessions: the portal's own sessions, never valid for the dashboard;
// - mail_messages: outgoing mail, its body encrypted until sent (src/mail/).

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('portal_people', (t) => {
    t.increments('id');
    t.string('email', 320).notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('last_sign_in_at');
  });
  await knex.schema.createTable('partner_portal_access', (t) => {
    t.increments('id');
    t.integer('partner_id').notNullable().unique().references('partners.id');
    t.integer('person_id').notNullable().references('portal_people.id');
    t.bigInteger('created_at').notNullable();
    t.index(['person_id']);
  });
  await knex.schema.createTable('portal_invitations', (t) => {
    t.increments('id');
    t.integer('partner_id').notNullable().references('partners.id');
    t.string('email', 320).notNullable();
    t.string('token_hash', 64).notNullable().unique();
    t.integer('invited_by');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('accepted_at');
    t.index(['partner_id']);
  });
  await knex.schema.createTable('portal_sign_in_tokens', (t) => {
    t.increments('id');
    t.integer('person_id').notNullable().references('portal_people.id');
    t.string('token_hash', 64).notNullable().unique();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('used_at');
    t.index(['person_id', 'created_at']);
  });
  await knex.schema.createTable('portal_sessions', (t) => {
    t.increments('id');
    t.string('token_hash', 64).notNullable().unique();
    t.integer('person_id').notNullable().references('portal_people.id');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['person_id']);
  });
  await knex.schema.createTable('mail_messages', (t) => {
    t.increments('id');
    t.string('kind', 32).notNullable();
    t.string('to_address', 320).notNullable();
    t.string('subject', 200).notNullable();
    // { text, html } as JSON, sealed by the secret box: it carries one-time links. Cleared once sent over SMTP.
    t.text('body_sealed');
    // queued (written with the action) → ready (seen by the outbox consumer) → sent | failed
    t.string('status', 16).notNullable().defaultTo('queued');
    t.integer('attempts').notNullable().defaultTo(0);
    t.bigInteger('next_attempt_at');
    t.text('last_error');
    t.string('transport', 16);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('sent_at');
    t.index(['status', 'next_attempt_at']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTable('mail_messages');
  await knex.schema.dropTable('portal_sessions');
  await knex.schema.dropTable('portal_sign_in_tokens');
  await knex.schema.dropTable('portal_invitations');
  await knex.schema.dropTable('partner_portal_access');
  await knex.schema.dropTable('portal_people');
}
