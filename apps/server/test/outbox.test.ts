/**
 * The outbox and its consumer loop (docs/architecture.md, "The outbox"): events are read in commit
 * order, each handled once per consumer across runners, and a failed pass loses nothing.
 */
import pino from 'pino';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, outboxTail, type NewEvent, type StoredEvent } from '../src/db/outbox.js';
import { OutboxRunner, preparedConsumer, type OutboxConsumer } from '../src/jobs/outbox-runner.js';
import { createDb } from '../src/db/knex.js';
import { parseDatabaseUrl } from '../src/config.js';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

let s: TestServer;
const extraPools: Knex[] = [];
beforeAll(async () => {
  s = await startTestServer();
  await s.db.schema.createTable('test_handled', (t) => {
    t.string('consumer', 64).notNullable();
    t.string('event_id', 40).notNullable();
    t.integer('seq').notNullable();
    // A second handling of one event would break this: the test's own "exactly once" check.
    t.unique(['consumer', 'event_id']);
  });
});
afterAll(async () => {
  for (const pool of extraPools) await pool.destroy();
  await s?.close();
});

const logger = pino({ level: 'silent' });
let seq = 0;

/** A consumer that writes every event it gets into `test_handled`, in its transaction. */
function recorder(name: string, fail?: () => boolean): OutboxConsumer {
  return {
    name,
    async handle(trx, events: StoredEvent[]) {
      for (const e of events) await trx('test_handled').insert({ consumer: name, event_id: e.event.id, seq: ++seq });
      if (fail?.()) throw new Error('consumer failed mid-batch');
    },
  };
}

/**
 * A consumer built as the stats consumers are: reads and sums first (`prepare`, outside the write
 * transaction on SQLite), then writes. `beforeWrite` runs between the two.
 */
function preparer(name: string, beforeWrite?: () => Promise<void>): OutboxConsumer {
  return preparedConsumer({
    name,
    async prepare(_db, events) {
      await beforeWrite?.();
      return async (trx) => {
        for (const e of events) await trx('test_handled').insert({ consumer: name, event_id: e.event.id, seq: ++seq });
      };
    },
  });
}

const programUpdated = (n: number): NewEvent => ({ type: 'program.updated', programId: 1, data: { program_id: 1, changed: [`field${n}`] }, occurredAt: Date.now() });

async function handledBy(name: string): Promise<string[]> {
  return (await s.db('test_handled').where({ consumer: name }).orderBy('seq').select('event_id')).map((r) => r.event_id);
}

/** A second pool on the same database: a runner there stands for another server process. */
function otherProcessDb(): Knex {
  const pool = createDb(parseDatabaseUrl(s.running.deps.config.database.client === 'sqlite' ? `sqlite:${s.running.deps.config.database.filename}` : s.running.deps.config.database.connectionString + (s.running.deps.config.database.schema ? `?schema=${s.running.deps.config.database.schema}` : '')));
  extraPools.push(pool);
  return pool;
}

describe(`[${dbKind}] the outbox: order and exactly-once handling`, () => {
  it('a consumer gets every committed event once, in the order they were written, with its payload', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]))));
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('order')]);
    await runner.drain();
    await runner.drain();
    expect(await handledBy('order')).toEqual(ids);
    const row = await s.db('outbox_events').where({ event_id: ids[0] }).first();
    expect(row).toMatchObject({ type: 'program.updated', version: 1, program_id: 1, workspace_id: 1 });
    expect(JSON.parse(row.payload)).toEqual({ program_id: 1, changed: ['field0'] });
  });

  it('an event written in a rolled-back transaction never reaches a consumer', async () => {
    await s.db
      .transaction(async (trx) => {
        await appendEvents(trx, [programUpdated(99)]);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('rollback')]);
    await runner.drain();
    const handled = await handledBy('rollback');
    const payloads = await s.db('outbox_events').whereIn('event_id', handled).select('payload');
    expect(payloads.map((p) => JSON.parse(p.payload).changed[0])).not.toContain('field99');
  });

  it('a pass that fails takes back what the consumer wrote and keeps the cursor: the next pass handles the same events once', async () => {
    const ids = await s.db.transaction((trx) => appendEvents(trx, [programUpdated(1), programUpdated(2)]));
    let failing = true;
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('crash', () => failing)]);
    await runner.drain();
    expect(await handledBy('crash')).toEqual([]);
    failing = false;
    await runner.drain();
    const handled = await handledBy('crash');
    expect(handled.slice(-2)).toEqual(ids);
    expect(new Set(handled).size).toBe(handled.length);
  });

  it('two runners (two processes) drain one consumer together: each event handled exactly once, in order', async () => {
    const written: string[] = [];
    for (let i = 0; i < 30; i++) written.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i), programUpdated(i + 100)]))));
    const a = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('shared')]);
    const b = new OutboxRunner({ db: otherProcessDb(), now: Date.now, logger }, [recorder('shared')]);
    await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
    await Promise.all([a.drain(), b.drain()]);
    const handled = await handledBy('shared');
    const everything = (await s.db('outbox_events').orderBy('id').select('event_id')).map((r) => r.event_id);
    expect(new Set(handled).size).toBe(handled.length);
    expect(handled).toEqual(everything);
    expect(handled.slice(-60)).toEqual(written);
  });

  it('a consumer that prepares before its write transaction gets every event once, in order', async () => {
    const written: string[] = [];
    for (let i = 0; i < 5; i++) written.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]))));
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [preparer('prepared')]);
    await runner.drain();
    await runner.drain();
    const handled = await handledBy('prepared');
    const everything = (await s.db('outbox_events').orderBy('id').select('event_id')).map((r) => r.event_id);
    expect(handled).toEqual(everything);
    expect(handled.slice(-5)).toEqual(written);
  });

  it('a cursor moved while a pass was under way (stats rebuild) takes back the pass’s writes; the next pass starts where it was moved', async () => {
    await s.db.transaction((trx) => appendEvents(trx, [programUpdated(1), programUpdated(2)]));
    let moves = 0;
    const rebuild = async () => {
      if (moves++ > 0) return;
      const tail = await outboxTail(s.db);
      await s.db('outbox_cursors').where({ consumer: 'moved' }).update({ last_txid: tail!.txid, last_id: tail!.id });
    };
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [preparer('moved', rebuild)]);
    await runner.drain();
    await runner.drain();
    expect(moves).toBeGreaterThan(0);
    expect(await handledBy('moved')).toEqual([]);
    const tail = await outboxTail(s.db);
    expect(await s.db('outbox_cursors').where({ consumer: 'moved' }).first('last_id')).toEqual({ last_id: tail!.id });
  });

  it('an event of a transaction that commits late is not skipped by a cursor that moved past a later id', async () => {
    const other = otherProcessDb();
    let releaseLate!: () => void;
    const lateGate = new Promise<void>((resolve) => (releaseLate = resolve));
    let lateWritten!: () => void;
    const lateAppended = new Promise<void>((resolve) => (lateWritten = resolve));
    const late = other.transaction(async (trx) => {
      const ids = await appendEvents(trx, [programUpdated(500)]);
      lateWritten();
      await lateGate;
      return ids;
    });
    if (dbKind === 'sqlite') {
      // SQLite has one writer: the early transaction waits for the late one; order is commit order.
      await lateAppended;
      releaseLate();
      await late;
    } else {
      await lateAppended;
    }
    const early = await s.db.transaction((trx) => appendEvents(trx, [programUpdated(501)]));
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('late')]);
    await runner.drain();
    releaseLate();
    const lateIds = await late;
    await runner.drain();
    const handled = await handledBy('late');
    expect(handled).toContain(lateIds[0]);
    expect(handled).toContain(early[0]);
    expect(new Set(handled).size).toBe(handled.length);
  });
});
