// Applications and link requests (docs/partners.md):
// - program_portal_settings: per program, whether it takes applications and link requests, and the
//   random slug of its public application page (made when first opened, kept when closed again);
// - partner_applications: applications from the public page; one pending application per program
//   and e-mail address (a partial unique index, on both engines);
// - link_requests: a partner's request for another referral link, answered by the owner.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('program_portal_settings', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().unique().references('programs.id').onDelete('CASCADE');
    t.boolean('applications_open').notNullable().defaultTo(false);
    t.boolean('link_requests_open').notNullable().defaultTo(false);
    t.string('apply_slug', 32).unique();
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('partner_applications', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    t.string('name', 200).notNullable();
    t.string('email', 320).notNullable();
    t.string('website', 2048);
    t.text('promotion').notNullable();
    // pending → approved | declined
    t.string('status', 16).notNullable().defaultTo('pending');
    t.string('decline_reason', 500);
    t.integer('partner_id').references('partners.id');
    t.integer('decided_by');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('decided_at');
    t.index(['program_id', 'status', 'created_at']);
  });
  await knex.raw("CREATE UNIQUE INDEX partner_applications_one_pending ON partner_applications (program_id, email) WHERE status = 'pending'");
  await knex.schema.createTable('link_requests', (t) => {
    t.increments('id');
    t.integer('partner_id').notNullable().references('partners.id');
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    t.string('short_link', 100);
    t.string('note', 500);
    t.string('status', 16).notNullable().defaultTo('pending');
    t.string('decline_reason', 500);
    t.integer('link_id').references('referral_links.id');
    t.integer('decided_by');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('decided_at');
    t.index(['program_id', 'status', 'created_at']);
    t.index(['partner_id', 'status']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTable('link_requests');
  await knex.raw('DROP INDEX IF EXISTS partner_applications_one_pending');
  await knex.schema.dropTable('partner_applications');
  await knex.schema.dropTable('program_portal_settings');
}
