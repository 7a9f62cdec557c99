// The outbox's events other than click batches' `clicks.recorded`, in their order (SQLite: id;
// PostgreSQL: txid, id), for the consumers that read no clicks (audit log, webhook deliveries,
// mail, the stats of leads and sales). Click batches write one `clicks.recorded` per program and
// batch — thousands a second under load — and each pass of such a consumer read every one of them
// between its cursor and the outbox's tail only to skip it: in a benchmark spreading clicks over
// 2,000 programs, 8 ms of SQLite's time in the event loop per consumer and pass (docs/performance.md,
// "Consumers that read no clicks"). The index is partial, so a click batch's rows never enter it.

/** @param {import('knex').Knex} knex */
export async function up(knex) {
  const columns = knex.client.dialect === 'postgresql' ? '(txid, id)' : '(id)';
  await knex.raw(`create index outbox_events_domain_idx on outbox_events ${columns} where type <> 'clicks.recorded'`);
}

/** @param {import('knex').Knex} knex */
export async function down(knex) {
  await knex.raw('drop index outbox_events_domain_idx');
}
