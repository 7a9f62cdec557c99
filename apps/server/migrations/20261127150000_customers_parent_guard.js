// PostgreSQL: the customers table's foreign keys to programs, partners and referral links give way
// to a guard on those three tables that refuses any DELETE (docs/decisions.md, "Customers' parent
// rows: guarded, not foreign keys").
//
// Every click inserts a customer row, and each of the three foreign keys ran a referential check
// per inserted row (`select 1 from only referral_links where id = $1 for key share`): measured 16.5
// µs a click of the batch function's 116 (docs/performance.md, "Clicks without per-row key
// checks"). Their `for key share` locks also made the hot link's counter row, which the same batch
// updates, a shared lock of two batches at once. What the keys guarded — no customer pointing at a
// program, partner or link that is gone — holds as well without them: Reftrack never deletes those
// rows (a link is deactivated, a program or partner kept for its history), every customer's parent
// ids are read from their rows, and the guard makes a DELETE of one fail, as the keys did while a
// customer referred to it. SQLite keeps its keys: its checks are lookups in the process, and
// dropping them would rebuild the customers table.

const PARENTS = ['programs', 'partners', 'referral_links'];
const GUARD = 'reftrack_parent_row_kept';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.schema.alterTable('customers', (t) => {
    t.dropForeign(['program_id']);
    t.dropForeign(['partner_id']);
    t.dropForeign(['link_id']);
  });
  // A statement-level trigger would miss nothing either, but a row trigger names the row.
  await knex.raw(`
    create or replace function ${GUARD}() returns trigger language plpgsql as $$
    begin
      raise exception '% row % is never deleted: customers refer to it', tg_table_name, old.id
        using errcode = 'restrict_violation',
              hint = 'Deactivate a referral link instead; programs and partners are kept for their history.';
    end
    $$`);
  for (const table of PARENTS) {
    await knex.raw(`create trigger ${table}_kept before delete on ${table} for each row execute function ${GUARD}()`);
  }
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  for (const table of PARENTS) await knex.raw(`drop trigger if exists ${table}_kept on ${table}`);
  await knex.raw(`drop function if exists ${GUARD}()`);
  await knex.schema.alterTable('customers', (t) => {
    t.foreign('program_id').references('programs.id');
    t.foreign('partner_id').references('partners.id');
    t.foreign('link_id').references('referral_links.id');
  });
}
