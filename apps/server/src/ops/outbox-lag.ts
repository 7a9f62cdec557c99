/** How far each outbox consumer is behind, for the metrics (read at scrape time, not per request). */
import type { Db } from '../db/knex.js';

export async function outboxLag(db: Db, now: number): Promise<Array<{ consumer: string; pending: number; oldestAgeSeconds: number }>> {
  const pg = db.client.config.client === 'pg';
  const cursors = (await db('outbox_cursors').select('consumer', 'last_txid', 'last_id')) as Array<{ consumer: string; last_txid: string | number; last_id: string | number }>;
  const out = [];
  for (const c of cursors) {
    // Consumers read in (txid, id) order on PostgreSQL, in id order on SQLite (jobs/outbox-runner.ts).
    const q = db('outbox_events');
    if (pg) q.whereRaw('(txid, id) > (?, ?)', [Number(c.last_txid), Number(c.last_id)]);
    else q.where('id', '>', Number(c.last_id));
    const row = (await q.count({ n: '*' }).min({ oldest: 'occurred_at' }).first()) as { n: string | number; oldest: string | number | null } | undefined;
    const pending = Number(row?.n ?? 0);
    out.push({ consumer: c.consumer, pending, oldestAgeSeconds: pending > 0 && row?.oldest != null ? Math.max(0, (now - Number(row.oldest)) / 1000) : 0 });
  }
  return out;
}
