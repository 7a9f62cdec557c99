// Clicks reach the stats rollups through an outbox consumer (jobs/stats-clicks.ts) instead of the
// click batch's own upsert: each batch's `clicks.recorded` event (version 2) carries its clicks
// summed per link, hour and dimensions. The consumer's cursor starts at the outbox's current end:
// the clicks of the events already there were rolled up by their batches. A server of the release
// before, still running during a deploy, keeps rolling its batches up itself and writes version 1
// events, which the consumer skips.

const CONSUMER = 'stats-clicks';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  const pg = knex.client.dialect === 'postgresql';
  const tail = await knex('outbox_events')
    .orderBy(pg ? [{ column: 'txid', order: 'desc' }, { column: 'id', order: 'desc' }] : [{ column: 'id', order: 'desc' }])
    .first(pg ? ['txid', 'id'] : ['id']);
  await knex('outbox_cursors')
    .insert({ consumer: CONSUMER, last_txid: tail?.txid ?? 0, last_id: tail?.id ?? 0, updated_at: Date.now() })
    .onConflict('consumer')
    .merge();
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex('outbox_cursors').where({ consumer: CONSUMER }).del();
}
