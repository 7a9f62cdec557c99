/**
 * The outbox consumers that read no clicks (audit log, webhook deliveries, mail, the stats of leads
 * and sales) walk the partial index of the other events (migration 20261128090000), not every
 * click batch's `clicks.recorded` between their cursor and the tail (docs/performance.md,
 * "Consumers that read no clicks"). Read from each database's own plan of the statement the
 * consumer sends, over an outbox of mostly clicks, as a busy server's is: a plan, not a timing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import type { DomainEventType } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { appendEvents, readEventsAfter, type NewEvent } from '../src/db/outbox.js';
import { AUDITED_TYPES } from '../src/jobs/audit-log.js';

let s: TestServer;
const CLICK_EVENTS = 30_000;
const NOW = Date.now();

beforeAll(async () => {
  s = await startTestServer();
  // Passes of the server's own consumers would move cursors meanwhile; the test reads by hand.
  await s.running.deps.outbox.stop();
  const click = (i: number) => ({ event_id: `evt_reads_${i}`, type: 'clicks.recorded', version: 2, workspace_id: 1, program_id: 1, payload: '{"program_id":1,"rollups":[]}', actor: null, occurred_at: NOW });
  for (let i = 0; i < CLICK_EVENTS; i += 500) await s.db('outbox_events').insert(Array.from({ length: 500 }, (_, j) => click(i + j)));
  const program = (n: number): NewEvent => ({ type: 'program.updated', programId: 1, data: { program_id: 1, changed: [`reads${n}`] }, occurredAt: NOW });
  await appendEvents(s.db, [program(1), program(2)]);
  await s.db.raw(dbKind === 'postgres' ? 'analyze outbox_events' : 'analyze');
}, 60_000);
afterAll(() => s?.close());

/** The statement `readEventsAfter` sends for a consumer of `types`, and the events it answered. */
async function consumerRead(types: readonly DomainEventType[]): Promise<{ sql: string; bindings: readonly unknown[]; events: number }> {
  const sent: Array<{ sql: string; bindings: readonly unknown[] }> = [];
  const listen = (q: { sql: string; bindings?: readonly unknown[] }) => sent.push({ sql: q.sql, bindings: q.bindings ?? [] });
  s.db.on('query', listen);
  try {
    const { events } = await readEventsAfter(s.db, { txid: 0, id: 0 }, 200, types);
    // The events' read (the tail's read before it names no payload).
    const read = sent.find((q) => q.sql.includes('payload'));
    if (!read) throw new Error(`no outbox read among: ${sent.map((q) => q.sql).join(' | ')}`);
    return { ...read, events: events.length };
  } finally {
    s.db.off('query', listen);
  }
}

/** What the database says it would do for `sql`: SQLite's plan lines, PostgreSQL's plan as JSON text. */
async function planOf(db: Knex, sql: string, bindings: readonly unknown[]): Promise<string> {
  if (dbKind === 'sqlite') {
    const rows = (await db.raw(`explain query plan ${sql}`, bindings as Knex.RawBinding[])) as Array<{ detail: string }>;
    return rows.map((r) => r.detail).join('\n');
  }
  // knex reports PostgreSQL's statement with its $n parameters: sent as is on a pooled connection.
  const client = db.client as { acquireConnection(): Promise<{ query(sql: string, values: readonly unknown[]): Promise<{ rows: Array<{ 'QUERY PLAN': unknown }> }> }>; releaseConnection(c: unknown): Promise<void> };
  const connection = await client.acquireConnection();
  try {
    const result = await connection.query(`explain (format json) ${sql}`, bindings);
    return JSON.stringify(result.rows[0]['QUERY PLAN']);
  } finally {
    await client.releaseConnection(connection);
  }
}

describe(`[${dbKind}] outbox consumers that read no clicks skip them by index`, () => {
  it('the audit log consumer walks the index of the events other than clicks, and reads its two events', async () => {
    const read = await consumerRead(AUDITED_TYPES);
    expect(read.events).toBe(2);
    expect(await planOf(s.db, read.sql, read.bindings)).toContain('outbox_events_domain_idx');
  });

  it('the click stats consumer reads the clicks in order, as before', async () => {
    const read = await consumerRead(['clicks.recorded']);
    expect(read.events).toBe(200);
    expect(await planOf(s.db, read.sql, read.bindings)).not.toContain('outbox_events_domain_idx');
  });
});
