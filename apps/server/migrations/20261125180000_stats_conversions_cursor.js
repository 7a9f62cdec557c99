// Leads, sales and refunds reach the stats rollups through an outbox consumer
// (jobs/stats-conversions.ts). Its cursor starts at the outbox's current end: what is already in the
// outbox was recorded before, and is counted by `reftrack-server stats rebuild` from the raw tables
// (docs/analytics.md, "Backfill") — reading it again would count it twice.

const CONSUMER = 'stats-conversions';

/**
 * Sets a consumer's cursor at the outbox's newest event (also used by 20261125190000).
 * @param {import('knex').Knex} knex
 * @param {string} consumer
 */
export async function cursorAtTail(knex, consumer) {
  const pg = knex.client.dialect === 'postgresql';
  const tail = await knex('outbox_events')
    .orderBy(pg ? [{ column: 'txid', order: 'desc' }, { column: 'id', order: 'desc' }] : [{ column: 'id', order: 'desc' }])
    .first(pg ? ['txid', 'id'] : ['id']);
  await knex('outbox_cursors')
    .insert({ consumer, last_txid: tail?.txid ?? 0, last_id: tail?.id ?? 0, updated_at: Date.now() })
    .onConflict('consumer')
    .merge();
}

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await cursorAtTail(knex, CONSUMER);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex('outbox_cursors').where({ consumer: CONSUMER }).del();
}
