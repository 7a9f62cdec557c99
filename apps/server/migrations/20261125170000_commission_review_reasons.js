// Self-referral review (docs/commissions.md "Held for review"): why a commission is held for the
// owner's review instead of approved when its hold passes — a space-separated list of
// COMMISSION_REVIEW_REASONS, null when none. A held commission is pending with no hold_until, so
// the approval job never picks it; the owner approves or declines it.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('commissions', (t) => {
    t.string('review_reasons', 200);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('commissions', (t) => {
    t.dropColumn('review_reasons');
  });
}
