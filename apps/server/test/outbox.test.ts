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
/**
 * The wait of a drain that cannot reach the newest event — its consumer fails, or an open
 * transaction holds the event back (PostgreSQL) — instead of the default 10 s: its passes still
 * run, many times over, in this half second.
 */
const SHORT_DRAIN_MS = 500;
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
function preparer(name: string, beforeWrite?: () => Promise<void>, options: { perPart?: number; failPart?: () => number | null; digest?: () => string } = {}): OutboxConsumer {
  const { perPart = Infinity, failPart = () => null, digest = () => 'd' } = options;
  return preparedConsumer({
    name,
    async prepare(_db, events) {
      await beforeWrite?.();
      const parts: Array<(trx: Knex.Transaction) => Promise<void>> = [];
      for (let i = 0; i < events.length; i += perPart) {
        const index = parts.length;
        const mine = events.slice(i, i + perPart);
        parts.push(async (trx) => {
          for (const e of mine) await trx('test_handled').insert({ consumer: name, event_id: e.event.id, seq: ++seq });
          if (failPart() === index) throw new Error(`the thread died in part ${index}`);
        });
      }
      return { parts, digest: digest() };
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
    await runner.drain(SHORT_DRAIN_MS);
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

  it('under load (a round read events at the busy rate) rounds wait the longer gap; a quiet runner passes at once; drain never waits', async () => {
    const until = async (name: string, n: number) => {
      for (let i = 0; i < 200 && (await handledBy(name)).length < n; i++) await new Promise((r) => setTimeout(r, 20));
      return (await handledBy(name)).length;
    };
    const burst = async (n: number) => {
      for (let i = 0; i < n; i++) await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]));
    };
    const tail = await outboxTail(s.db);
    for (const name of ['loaded', 'quiet']) await s.db('outbox_cursors').insert({ consumer: name, last_txid: tail!.txid, last_id: tail!.id, updated_at: Date.now() });
    // The rate is judged over rounds of half a second or more: 10 events in about 0.6 s.
    await burst(5);
    // Made after the first burst: a runner's first window starts when it is made, and a slow
    // burst (half a second on a busy CI host) would close that window at its first round, with
    // five events in it — load at one event a second — before the test means it to.
    const loaded = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('loaded')], { busy: { eventsPerSecond: 1, gapMs: 60_000 } });
    const quiet = new OutboxRunner({ db: s.db, now: Date.now, logger }, [recorder('quiet')], { busy: { eventsPerSecond: 1_000_000, gapMs: 60_000 } });
    for (const r of [loaded, quiet]) r.poke();
    expect([await until('loaded', 5), await until('quiet', 5)]).toEqual([5, 5]);
    await new Promise((r) => setTimeout(r, 600));
    await burst(5);
    for (const r of [loaded, quiet]) r.poke();
    expect([await until('loaded', 10), await until('quiet', 10)]).toEqual([10, 10]);
    await burst(1);
    for (const r of [loaded, quiet]) r.poke();
    expect(await until('quiet', 11)).toBe(11);
    await new Promise((r) => setTimeout(r, 300));
    expect((await handledBy('loaded')).length).toBe(10);
    await loaded.drain();
    expect((await handledBy('loaded')).length).toBe(11);
    await Promise.all([loaded.stop(), quiet.stop()]);
  });

  it('a consumer with nothing to do now (idle) has its cursor moved past every visible event, none handed to it', async () => {
    let idle = true;
    const consumer: OutboxConsumer = { ...recorder('idle'), idle: async () => idle };
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [consumer]);
    await s.db.transaction((trx) => appendEvents(trx, [programUpdated(1), programUpdated(2)]));
    await runner.drain();
    expect(await handledBy('idle')).toEqual([]);
    expect(await s.db('outbox_cursors').where({ consumer: 'idle' }).first('last_id')).toEqual({ last_id: (await outboxTail(s.db))!.id });
    idle = false;
    const later = await s.db.transaction((trx) => appendEvents(trx, [programUpdated(3)]));
    await runner.drain();
    expect(await handledBy('idle')).toEqual(later);
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
    await runner.drain(SHORT_DRAIN_MS);
    releaseLate();
    const lateIds = await late;
    await runner.drain();
    const handled = await handledBy('late');
    expect(handled).toContain(lateIds[0]);
    expect(handled).toContain(early[0]);
    expect(new Set(handled).size).toBe(handled.length);
  });
});

describe(`[${dbKind}] the outbox: a pass in parts (the stats thread's long passes)`, () => {
  const openPass = (name: string) => s.db('outbox_cursors').where({ consumer: name }).first('last_id', 'pass_last_id', 'pass_parts_done', 'pass_digest');

  it('a pass in several parts handles every event once, in order, and leaves no pass open', async () => {
    const written: string[] = [];
    for (let i = 0; i < 7; i++) written.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]))));
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [preparer('parts', undefined, { perPart: 2 })], { batch: 1000 });
    await runner.drain();
    const handled = await handledBy('parts');
    const everything = (await s.db('outbox_events').orderBy('id').select('event_id')).map((r) => r.event_id);
    expect(handled).toEqual(everything);
    expect(handled.slice(-7)).toEqual(written);
    expect(await openPass('parts')).toMatchObject({ last_id: (await outboxTail(s.db))!.id, pass_last_id: null, pass_parts_done: 0, pass_digest: null });
  });

  it('a pass that dies after some of its parts resumes with the next part: nothing handled twice, nothing lost', async () => {
    await s.db.transaction((trx) => appendEvents(trx, [programUpdated(1)]));
    const before = await outboxTail(s.db);
    // The cursor starts at the tail: only this test's events are the pass.
    await s.db('outbox_cursors').insert({ consumer: 'resumed', last_txid: before!.txid, last_id: before!.id, updated_at: Date.now() });
    const written: string[] = [];
    for (let i = 0; i < 7; i++) written.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]))));
    let dies: number | null = 2;
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger }, [preparer('resumed', undefined, { perPart: 2, failPart: () => dies })], { batch: 1000 });
    await runner.drain(SHORT_DRAIN_MS);
    if (dbKind === 'sqlite') {
      // Parts 0 and 1 committed (four events); part 2 rolled back; the pass stays open at its end.
      expect(await handledBy('resumed')).toEqual(written.slice(0, 4));
      expect(await openPass('resumed')).toMatchObject({ last_id: before!.id, pass_last_id: (await outboxTail(s.db))!.id, pass_parts_done: 2, pass_digest: 'd' });
    } else {
      // PostgreSQL's pass is one transaction: nothing of it committed.
      expect(await handledBy('resumed')).toEqual([]);
    }
    // Events written meanwhile wait for the next pass: the open pass is the same seven events.
    const later = await s.db.transaction((trx) => appendEvents(trx, [programUpdated(8)]));
    dies = null;
    await runner.drain();
    // test_handled's unique key would have failed a second handling of any event.
    expect(await handledBy('resumed')).toEqual([...written, ...later]);
    expect(await openPass('resumed')).toMatchObject({ pass_last_id: null, pass_parts_done: 0 });
  });

  // PostgreSQL's pass is one transaction: it never resumes.
  it.skipIf(dbKind !== 'sqlite')('a resumed pass that prepares other rows than it first did says so in the log, and still finishes', async () => {
    const tail = await outboxTail(s.db);
    await s.db('outbox_cursors').insert({ consumer: 'redigested', last_txid: tail!.txid, last_id: tail!.id, updated_at: Date.now() });
    const written: string[] = [];
    for (let i = 0; i < 4; i++) written.push(...(await s.db.transaction((trx) => appendEvents(trx, [programUpdated(i)]))));
    let dies: number | null = 1;
    let digest = 'first';
    const warnings: string[] = [];
    const runner = new OutboxRunner({ db: s.db, now: Date.now, logger: { warn: (_obj, msg) => void warnings.push(msg) } }, [preparer('redigested', undefined, { perPart: 2, failPart: () => dies, digest: () => digest })], { batch: 1000 });
    await runner.drain();
    expect(await handledBy('redigested')).toEqual(written.slice(0, 2));
    dies = null;
    digest = 'second';
    await runner.drain();
    expect(await handledBy('redigested')).toEqual(written);
    expect(warnings.some((w) => w.startsWith('an interrupted outbox pass prepared other rows'))).toBe(true);
  });
});
