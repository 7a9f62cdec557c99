// Foundation schema: identity skeleton (accounts, workspaces, memberships), programs and their keys,
// partners and enrollments with click metrics, referral links, customers, click/lead/sale events,
// commissions with adjustments, platform fees, refunds and tracking logs.
// Times are epoch milliseconds (bigint) so that SQLite and PostgreSQL compare and sort them alike.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.createTable('accounts', (t) => {
    t.increments('id');
    t.string('email', 320).notNullable().unique();
    t.string('name', 200);
    t.boolean('suspended').notNullable().defaultTo(false);
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('workspaces', (t) => {
    t.increments('id');
    t.string('name', 200).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('memberships', (t) => {
    t.increments('id');
    t.integer('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.integer('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    t.string('role', 20).notNullable();
    t.unique(['workspace_id', 'account_id']);
    t.index(['account_id']);
  });
  await knex.schema.createTable('programs', (t) => {
    t.increments('id');
    t.integer('workspace_id').references('workspaces.id');
    t.string('name', 200).notNullable();
    t.string('domain', 253).notNullable();
    t.string('commission_type', 32).notNullable();
    t.decimal('commission_rate', 14, 4).notNullable();
    t.integer('attribution_window_days').notNullable().defaultTo(60);
    t.string('lead_auth', 20).notNullable().defaultTo('server_required');
    t.string('stripe_account_id', 255);
    t.string('stripe_webhook_secret', 255);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['workspace_id']);
  });
  await knex.schema.createTable('program_keys', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().unique().references('programs.id').onDelete('CASCADE');
    t.string('key_hash', 64).notNullable().unique();
    t.string('key_last4', 8).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('rotation_marked_at');
    t.bigInteger('rotation_deadline');
  });
  await knex.schema.createTable('partners', (t) => {
    t.increments('id');
    t.string('name', 200).notNullable();
    t.string('email', 320);
    t.string('code', 100).notNullable().unique();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('partner_programs', (t) => {
    t.increments('id');
    t.integer('partner_id').notNullable().references('partners.id').onDelete('CASCADE');
    t.integer('program_id').notNullable().references('programs.id').onDelete('CASCADE');
    t.bigInteger('clicks').notNullable().defaultTo(0);
    t.bigInteger('leads').notNullable().defaultTo(0);
    t.bigInteger('sales').notNullable().defaultTo(0);
    t.bigInteger('revenue_cents').notNullable().defaultTo(0);
    t.bigInteger('last_clicked_at');
    t.bigInteger('created_at').notNullable();
    t.unique(['partner_id', 'program_id']);
    t.index(['program_id']);
  });
  await knex.schema.createTable('referral_links', (t) => {
    t.increments('id');
    t.string('short_link', 200).notNullable().unique();
    t.integer('partner_id').references('partners.id');
    t.integer('program_id').references('programs.id');
    t.boolean('active').notNullable().defaultTo(true);
    t.bigInteger('clicks').notNullable().defaultTo(0);
    t.bigInteger('last_clicked');
    t.bigInteger('created_at').notNullable();
    t.index(['program_id']);
  });
  await knex.schema.createTable('customers', (t) => {
    t.increments('id');
    t.string('click_id', 64).notNullable().unique();
    t.integer('program_id').notNullable().references('programs.id');
    t.integer('partner_id').references('partners.id');
    t.integer('link_id').references('referral_links.id');
    t.string('customer_key', 255);
    t.string('email', 320);
    t.string('processor_customer_id', 255);
    t.string('status', 20).notNullable().defaultTo('click');
    t.boolean('is_test').notNullable().defaultTo(false);
    t.bigInteger('click_at').notNullable();
    t.bigInteger('lead_at');
    t.bigInteger('converted_at');
    t.bigInteger('created_at').notNullable();
    t.index(['program_id', 'customer_key']);
    t.index(['customer_key']);
    t.index(['program_id', 'email']);
    t.index(['processor_customer_id']);
  });
  await knex.schema.createTable('click_events', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable();
    t.integer('link_id');
    t.integer('partner_id');
    t.string('click_id', 64).notNullable();
    t.string('session_id', 255);
    t.text('page_url');
    t.text('page_title');
    t.text('referrer_url');
    t.string('screen_resolution', 32);
    t.string('viewport_size', 32);
    t.string('language', 35);
    t.string('timezone', 64);
    t.text('user_agent');
    t.string('geo_country', 2);
    t.string('geo_region', 100);
    t.string('geo_city', 100);
    t.string('device_type', 32);
    t.string('device_os', 64);
    t.string('browser_name', 64);
    t.boolean('is_test').notNullable().defaultTo(false);
    t.bigInteger('click_timestamp').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['program_id', 'is_test', 'click_timestamp']);
    t.index(['click_id']);
  });
  await knex.schema.createTable('lead_events', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable();
    t.integer('customer_id');
    t.string('click_id', 64);
    t.string('customer_key', 255);
    t.string('email', 320);
    t.string('session_id', 255);
    t.text('page_url');
    t.boolean('provisional').notNullable().defaultTo(false);
    t.string('source', 20).notNullable();
    t.boolean('is_test').notNullable().defaultTo(false);
    t.bigInteger('lead_timestamp').notNullable();
    t.bigInteger('settled_at');
    t.bigInteger('created_at').notNullable();
    t.index(['program_id', 'is_test', 'lead_timestamp']);
    t.index(['customer_id']);
  });
  await knex.schema.createTable('sale_events', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable();
    t.integer('customer_id');
    t.string('click_id', 64);
    t.string('processor_event_id', 255).notNullable().unique();
    t.bigInteger('amount_cents').notNullable();
    t.string('currency', 3).notNullable();
    t.string('sale_type', 64);
    t.string('payment_status', 32).notNullable().defaultTo('paid');
    t.boolean('is_recurring').notNullable().defaultTo(false);
    t.string('subscription_id', 255);
    t.string('provider', 32);
    t.string('provider_payment_id', 255);
    t.boolean('livemode');
    t.boolean('is_test').notNullable().defaultTo(false);
    t.bigInteger('sale_date').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['program_id', 'is_test', 'sale_date']);
    t.index(['customer_id']);
  });
  await knex.schema.createTable('commissions', (t) => {
    t.increments('id');
    t.integer('sale_id').notNullable().unique().references('sale_events.id');
    t.integer('program_id').notNullable();
    t.integer('partner_id').notNullable();
    t.integer('customer_id').notNullable();
    t.bigInteger('amount_cents').notNullable();
    t.string('currency', 3).notNullable();
    t.string('status', 20).notNullable().defaultTo('pending');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['partner_id', 'status']);
  });
  await knex.schema.createTable('commission_adjustments', (t) => {
    t.increments('id');
    t.integer('commission_id').notNullable().references('commissions.id');
    t.bigInteger('amount_cents').notNullable();
    t.string('reason', 32).notNullable();
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('platform_fees', (t) => {
    t.increments('id');
    t.integer('commission_id').notNullable().unique().references('commissions.id');
    t.integer('sale_id').notNullable();
    t.integer('program_id').notNullable();
    t.bigInteger('amount_cents').notNullable();
    t.string('currency', 3).notNullable();
    t.integer('rate_bps').notNullable();
    t.string('status', 20).notNullable().defaultTo('pending');
    t.bigInteger('created_at').notNullable();
  });
  await knex.schema.createTable('refunds', (t) => {
    t.increments('id');
    t.integer('sale_id').notNullable().references('sale_events.id');
    t.integer('program_id').notNullable();
    t.string('reason', 20).notNullable();
    t.text('refund_reason');
    t.bigInteger('amount_cents').notNullable();
    // One refund per external reference: 'api' for the refund endpoint, the processor's id otherwise.
    t.string('external_ref', 255).notNullable();
    t.bigInteger('created_at').notNullable();
    t.unique(['sale_id', 'external_ref']);
  });
  await knex.schema.createTable('tracking_logs', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable();
    t.string('kind', 32).notNullable();
    t.boolean('is_test').notNullable().defaultTo(false);
    t.text('message').notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['program_id', 'created_at']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  for (const table of [
    'tracking_logs', 'refunds', 'platform_fees', 'commission_adjustments', 'commissions', 'sale_events',
    'lead_events', 'click_events', 'customers', 'referral_links', 'partner_programs', 'partners',
    'program_keys', 'programs', 'memberships', 'workspaces', 'accounts',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
