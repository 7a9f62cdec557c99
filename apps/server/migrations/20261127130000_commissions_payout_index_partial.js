// commissions.payout_id is indexed only where it is set. Every sale inserts a commission whose
// payout_id is null (it is set when a payout pays it), and an index entry for each of them cost the
// sale route ~3 µs of SQLite's time on the event loop (docs/performance.md, "Longer stats passes and
// a sale's statements") for an index whose readers all look for commissions of one payout
// (`payout_id = ?`) or paid ones (`payout_id is not null`): both databases use a partial index for
// those, as its condition follows from theirs.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('commissions', (t) => t.dropIndex(['payout_id'], 'commissions_payout_id_index'));
  await knex.raw('create index commissions_payout_id_index on commissions (payout_id) where payout_id is not null');
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop index commissions_payout_id_index');
  await knex.schema.alterTable('commissions', (t) => t.index(['payout_id'], 'commissions_payout_id_index'));
}
