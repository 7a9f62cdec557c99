// Clicks reach the stats rollups through an outbox consumer (jobs/stats-clicks.ts) instead of the
// click batch's own upsert: each batch's `clicks.recorded` event (version 2) carries its clicks
// summed per link, hour and dimensions. The consumer's cursor starts at the outbox's current end:
// the clicks of the events already there were rolled up by their batches. A server of the release
// before, still running during a deploy, keeps rolling its batches up itself and writes version 1
// events, which the consumer skips.

import { cursorAtTail } from './20261125180000_stats_conversions_cursor.js';

const CONSUMER = 'stats-clicks';

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  await cursorAtTail(knex, CONSUMER);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex('outbox_cursors').where({ consumer: CONSUMER }).del();
}
