// A consumer pass written in several transactions (src/jobs/outbox-runner.ts, "chunked passes"):
// the stats thread on SQLite rolls up thousands of events at a time and writes their rollup rows a
// few thousand per transaction, so that it never holds the file's one write lock for long. Until
// the last part commits, the cursor row says where the pass ends, how many parts have committed
// and a digest of the rows it writes; a thread that died mid-pass resumes the same pass with the
// next part instead of counting the committed parts again.
//
// - pass_last_txid, pass_last_id: the position of the pass's last event; null when no pass is open.
// - pass_parts_done: parts committed so far (0 when no pass is open).
// - pass_digest: a hash of the pass's rows, checked when a pass is resumed.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await knex.schema.alterTable('outbox_cursors', (t) => {
    t.bigInteger('pass_last_txid').nullable();
    t.bigInteger('pass_last_id').nullable();
    t.integer('pass_parts_done').notNullable().defaultTo(0);
    t.string('pass_digest', 32).nullable();
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  // A pass still open is given up: its cursor stays where it was, and its committed parts stay
  // counted (an open pass exists only while a server runs or after one died; `stats rebuild`
  // recounts everything from the raw tables).
  await knex.schema.alterTable('outbox_cursors', (t) => {
    t.dropColumn('pass_last_txid');
    t.dropColumn('pass_last_id');
    t.dropColumn('pass_parts_done');
    t.dropColumn('pass_digest');
  });
}
