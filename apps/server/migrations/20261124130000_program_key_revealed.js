// Whether a program's current key was ever shown in full. A key created with its program is never
// shown (spec 5.1), so the dashboard offers "Generate key" for it, without the warning that the key
// in use stops working; once a key has been shown, replacing it is a rotation and says so.
// Keys that exist before this migration count as shown: nobody can tell whether one of them is
// deployed, and a missing warning could take a live integration down.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('program_keys', (t) => t.bigInteger('revealed_at'));
  await knex('program_keys').update({ revealed_at: knex.ref('created_at') });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.alterTable('program_keys', (t) => t.dropColumn('revealed_at'));
}
