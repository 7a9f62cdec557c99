/**
 * The stats thread (jobs/stats-thread.ts, docs/architecture.md "The outbox"): the consumers that
 * fill the stats rollups run in a worker thread with a database connection of its own, off the
 * event loop; a thread that dies is replaced, and what it was doing is done again, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { click, serverLead } from './helpers/flows.js';
import { RECENT, rollupRows, RollupSet, SETTLED, upsertRollups } from '../src/db/stats-rollups.js';
import { LOCK_STATS_THREAD, SqliteWriteLock, writeLockFor } from '../src/db/sqlite-write-lock.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

let n = 0;
const customer = () => `stats-thread-${dbKind}-${Date.now()}-${n++}`;

/** Leads counted in program 1's hourly rollup rows (every lead of these tests is one of its). */
async function leadsCounted(): Promise<number> {
  const row = await s.db.from(s.db.raw(rollupRows(s.db, 1))).where({ program_id: 1, span: 1, dim: '', partner_id: 0, link_id: 0, value: '', currency: '' }).sum({ leads: 'leads' }).first();
  return Number(row?.leads ?? 0);
}

describe(`[${dbKind}] the stats thread`, () => {
  it("rolls leads up on a connection of its own: the requests' connection runs no rollup statement", async () => {
    const before = await leadsCounted();
    const statements: string[] = [];
    const listen = (q: { sql: string }) => statements.push(q.sql);
    s.db.on('query', listen);
    try {
      for (let i = 0; i < 3; i++) await serverLead(s, await click(s), customer());
      await s.running.deps.outbox.drain();
      // The listener hears this connection (PostgreSQL's leads go through node-pg, not knex).
      await s.db('programs').where({ id: 1 }).first('id');
    } finally {
      s.db.off('query', listen);
    }
    expect(await leadsCounted()).toBe(before + 3);
    expect(statements.some((sql) => /programs/.test(sql))).toBe(true);
    expect(statements.filter((sql) => /stats_rollups/.test(sql))).toEqual([]);
  });

  it('a thread that dies is replaced, and the leads committed around its death are each counted once', async () => {
    const before = await leadsCounted();
    await serverLead(s, await click(s), customer());
    await serverLead(s, await click(s), customer());
    // Perhaps mid-pass: its transaction rolls back and the next thread reads the same events again.
    await s.running.deps.outbox.stats.terminate();
    await serverLead(s, await click(s), customer());
    await serverLead(s, await click(s), customer());
    // Drains asked of no thread wait for the next one (it starts a second after the death).
    await s.running.deps.outbox.drain();
    expect(await leadsCounted()).toBe(before + 4);
  });

  it('moves the rollup rows of ended hours into the settled rows of their hour, day and month on its own (when it starts, then once a minute)', async () => {
    const set = new RollupSet();
    set.add({ programId: 780, partnerId: null, linkId: null, dims: null, currency: '', at: Date.UTC(2021, 5, 1, 12), counters: { clicks: 7 } });
    await upsertRollups(s.db, set);
    const count = async (table: string) => Number((await s.db(table).where({ program_id: 780 }).count({ n: '*' }))[0].n);
    expect(await count(RECENT)).toBe(1);
    // The next thread moves what has ended as it starts.
    await s.running.deps.outbox.stats.terminate();
    const deadline = Date.now() + 15_000;
    while ((await count(RECENT)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await count(RECENT)).toBe(0);
    expect(await count(SETTLED)).toBe(3);
    await s.db(SETTLED).where({ program_id: 780 }).del();
  });

  it.skipIf(dbKind !== 'sqlite')('SQLite: a thread that dies holding the write lock gives it back, so writes go on', async () => {
    const before = await leadsCounted();
    const clickId = await click(s);
    const { filename } = s.running.deps.config.database as { filename: string };
    // The thread's hold on the file's write lock, as a thread that died mid-pass leaves it.
    const held = new SqliteWriteLock(writeLockFor(filename).buffer, LOCK_STATS_THREAD);
    await held.acquire();
    let answered = false;
    const lead = serverLead(s, clickId, customer()).then((body) => {
      answered = true;
      return body;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(answered).toBe(false);
    await s.running.deps.outbox.stats.terminate();
    expect((await lead).success).toBe(true);
    await s.running.deps.outbox.drain();
    expect(await leadsCounted()).toBe(before + 1);
  });
});
