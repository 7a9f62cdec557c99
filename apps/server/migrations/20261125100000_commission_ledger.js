// Commissions an owner can approve and pay (docs/commissions.md):
// - a program's hold period and payout minimum;
// - a commission's hold end (approved by the approval job once it passes without a refund), the
//   reason an owner declined it, and the payout that paid it;
// - a sale's reason for paying no commission (first sale only, no partner, test);
// - payouts (one partner, one currency) grouped in batches, and claw-back adjustments carried into
//   the payout that settles them;
// - partners' payout details, encrypted at rest (src/secrets/).
// Existing commissions get a hold end of their creation plus 30 days, the default hold.

const DAY_MS = 86_400_000;

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('programs', (t) => {
    t.integer('commission_hold_days').notNullable().defaultTo(30);
    // In major units of each currency (50 = 50.00 USD, 50 EUR, 50 JPY): one number that reads the same in every currency.
    t.integer('payout_minimum').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('payout_batches', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().references('programs.id');
    t.string('method', 16).notNullable();
    t.bigInteger('created_at').notNullable();
    t.index(['program_id']);
  });
  await knex.schema.createTable('payouts', (t) => {
    t.increments('id');
    t.integer('program_id').notNullable().references('programs.id');
    t.integer('partner_id').notNullable().references('partners.id');
    t.integer('batch_id').references('payout_batches.id');
    t.string('currency', 3).notNullable();
    t.bigInteger('amount_cents').notNullable();
    t.bigInteger('commissions_cents').notNullable();
    t.bigInteger('adjustments_cents').notNullable();
    t.integer('commission_count').notNullable();
    t.string('method', 16).notNullable();
    t.string('reference', 100).notNullable();
    t.string('status', 16).notNullable().defaultTo('created');
    t.text('note');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.unique(['program_id', 'reference']);
    t.index(['program_id', 'created_at']);
    t.index(['batch_id']);
  });
  await knex.schema.alterTable('commissions', (t) => {
    t.bigInteger('hold_until');
    t.text('status_reason');
    // No REFERENCES on the columns added to existing tables: SQLite drops a column in place only
    // when no constraint names it (`down` below); the domain core writes only ids it just read.
    t.integer('payout_id');
    t.index(['status', 'hold_until']);
    t.index(['program_id', 'created_at']);
    t.index(['payout_id']);
  });
  await knex('commissions').update({ hold_until: knex.raw('created_at + ?', [30 * DAY_MS]) });
  await knex.schema.alterTable('commission_adjustments', (t) => {
    t.integer('payout_id');
    t.index(['commission_id']);
  });
  await knex.schema.alterTable('sale_events', (t) => {
    t.string('commission_reason', 32);
  });
  await knex.schema.createTable('partner_payout_details', (t) => {
    t.increments('id');
    t.integer('partner_id').notNullable().unique().references('partners.id');
    t.string('method', 16).notNullable();
    // The details as JSON, sealed by the secret box: PayPal e-mail or bank details.
    t.text('details_sealed').notNullable();
    t.bigInteger('updated_at').notNullable();
  });
}

/**
 * Columns are dropped in place: knex's SQLite fallback copies a table and drops the old one, which
 * the foreign keys that point at `programs`, `sale_events` and `commissions` refuse.
 * @param {import('knex').Knex} knex
 * @param {string} table
 * @param {string[]} columns
 */
async function dropColumns(knex, table, columns) {
  for (const column of columns) await knex.raw('alter table ?? drop column ??', [table, column]);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTable('partner_payout_details');
  await dropColumns(knex, 'sale_events', ['commission_reason']);
  await knex.schema.alterTable('commission_adjustments', (t) => t.dropIndex(['commission_id']));
  await dropColumns(knex, 'commission_adjustments', ['payout_id']);
  await knex.schema.alterTable('commissions', (t) => {
    t.dropIndex(['status', 'hold_until']);
    t.dropIndex(['program_id', 'created_at']);
    t.dropIndex(['payout_id']);
  });
  await dropColumns(knex, 'commissions', ['payout_id', 'status_reason', 'hold_until']);
  await knex.schema.dropTable('payouts');
  await knex.schema.dropTable('payout_batches');
  await dropColumns(knex, 'programs', ['payout_minimum', 'commission_hold_days']);
}
