// The house issue: one outbox of domain events, written in the same transaction as each change;
// a cursor per consumer of it; and the audit log, its first consumer's table.
//
// On PostgreSQL each event row records the id of the transaction that wrote it (`txid`). Ids from a
// sequence are taken at insert time, but transactions commit in another order, so "every id above
// my cursor" would skip a row whose transaction commits after a later id was read. A consumer
// therefore reads in (txid, id) order and only rows whose transaction is older than every
// transaction still running (pg_snapshot_xmin): no row can appear behind its cursor later. SQLite
// writes one transaction at a time, so ids are already in commit order there.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  const pg = knex.client.dialect === 'postgresql';
  await knex.schema.createTable('outbox_events', (t) => {
    t.bigIncrements('id');
    t.string('event_id', 40).notNullable().unique();
    t.string('type', 64).notNullable();
    t.smallint('version').notNullable();
    t.integer('workspace_id');
    t.integer('program_id');
    // The payload as the contract types it (JSON text on both engines).
    t.text('payload').notNullable();
    // Who did it (JSON), for the audit log; never delivered to webhooks.
    t.text('actor');
    t.bigInteger('occurred_at').notNullable();
    if (pg) t.bigInteger('txid').notNullable().defaultTo(knex.raw('(pg_current_xact_id()::text::bigint)'));
  });
  if (pg) await knex.schema.alterTable('outbox_events', (t) => t.index(['txid', 'id'], 'outbox_events_order_idx'));
  await knex.schema.createTable('outbox_cursors', (t) => {
    t.string('consumer', 64).primary();
    t.bigInteger('last_txid').notNullable().defaultTo(0);
    t.bigInteger('last_id').notNullable().defaultTo(0);
    t.bigInteger('updated_at').notNullable();
  });
  await knex.schema.createTable('audit_log', (t) => {
    t.increments('id');
    // An account-level event (a suspension, a CLI token revoked) is listed in each workspace the
    // account belongs to: one row per event and workspace.
    t.string('event_id', 40).notNullable();
    t.integer('workspace_id');
    t.integer('program_id');
    t.string('action', 64).notNullable();
    t.string('actor_type', 20).notNullable();
    t.integer('actor_id');
    t.string('actor_label', 320);
    t.string('ip', 64);
    // The event's payload (JSON): the audit log outlives the outbox rows it was built from.
    t.text('details').notNullable();
    t.bigInteger('occurred_at').notNullable();
    t.index(['workspace_id', 'occurred_at', 'id']);
    t.unique(['event_id', 'workspace_id']);
  });
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.schema.dropTableIfExists('audit_log');
  await knex.schema.dropTableIfExists('outbox_cursors');
  await knex.schema.dropTableIfExists('outbox_events');
}
