// PostgreSQL: every change to what authenticates a program key announces itself on the channel
// `reftrack_program_keys`, its payload the table's schema, whoever makes it (a dashboard, the
// operator command in another process, psql). Each server process listens
// (src/db/program-key-notices.ts) and may then keep the keys it has read for longer than half a
// second without a regenerated or retired key working on after the change (5.4, 5.5). One notice
// per statement: PostgreSQL folds a transaction's identical notices into one. SQLite has no
// notifications; its servers keep keys for half a second.

const CHANNEL = 'reftrack_program_keys';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw(`create function program_keys_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('${CHANNEL}', tg_table_schema);
      return null;
    end $$`);
  // last4 and revealed_at are shown on the dashboard but authenticate nothing.
  await knex.raw(`create trigger program_keys_changed
    after insert or delete or truncate or update of key_hash, program_id, rotation_marked_at, rotation_deadline on program_keys
    for each statement execute function program_keys_changed()`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  if (knex.client.dialect !== 'postgresql') return;
  await knex.raw('drop trigger program_keys_changed on program_keys');
  await knex.raw('drop function program_keys_changed()');
}
