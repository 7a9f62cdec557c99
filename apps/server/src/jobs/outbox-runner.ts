/**
 * The consumer loop of the outbox (docs/architecture.md, "The outbox"). Every server process runs
 * one; each consumer reads the events in commit order and handles each of them once across all
 * processes:
 *
 * - A consumer's cursor is one row of `outbox_cursors`. A pass takes the consumer in a transaction
 *   (an advisory transaction lock on PostgreSQL: a process whose peer holds it skips the consumer
 *   this time; on SQLite the write transaction itself is the one writer), reads the cursor and the
 *   next events after it, hands them to the consumer *in the same transaction*, and moves the
 *   cursor past them — only from where it read it.
 * - So what a consumer writes to the database commits together with the cursor: a crash anywhere
 *   rolls both back and the next pass handles the same events again — nothing lost, nothing done
 *   twice. A consumer with effects outside the database (webhook deliveries, e-mail) writes its
 *   own work rows here and performs them elsewhere, at least once.
 * - A pass runs when the process starts, soon after this process commits an event (`poke`), and
 *   every POLL_MS for events other processes wrote.
 */
import type { Knex } from 'knex';
import type { DomainEventType } from '@reftrack/contract';
import { isSqlite } from '../db/knex.js';
import { outboxTail, readEventsAfter, readEventsThrough, visibleTail, type OutboxPosition, type StoredEvent } from '../db/outbox.js';
import { yieldWriteLock } from '../db/sqlite-write-lock.js';
import { changedRows, firstRow } from '../db/statement.js';

export interface OutboxConsumer {
  /** The cursor's key; never renamed once events were handled under it. */
  name: string;
  /** The event types it wants; the cursor moves past the others without calling it. */
  types?: readonly DomainEventType[];
  /** Handles events in order, inside the transaction that moves the cursor past them. */
  handle(trx: Knex.Transaction, events: StoredEvent[], now: number): Promise<void>;
  /**
   * Optional, for a consumer whose work is mostly reads and arithmetic (the stats rollups): on
   * SQLite the runner calls it before the pass's write transactions, so those reads do not hold the
   * file's write lock every request's commit waits for, and commits the parts it answers one
   * transaction each, the last one with the cursor's move (a chunked pass, below). Doing the same
   * as `handle` is its contract; on PostgreSQL the runner calls `handle`.
   */
  prepare?(db: Knex, events: StoredEvent[], now: number): Promise<PreparedWrites>;
  /**
   * Optional: whether the consumer would write nothing for any event now (webhooks without an
   * enabled endpoint). Then its pass moves the cursor past every visible event without reading
   * them — the same outcome as handling them, without reading and parsing their payloads.
   */
  idle?(q: Knex | Knex.Transaction): Promise<boolean>;
  /** Called once what `handle` wrote has committed (a worker that performs it can start now). */
  committed?(): void;
}

/**
 * What a consumer's `prepare` answers: its pass's writes in parts, committed in order. The parts
 * must be the same whenever the same events are prepared again (a resumed pass skips those that
 * committed), and `digest` says whether they are.
 */
export interface PreparedWrites {
  parts: Array<(trx: Knex.Transaction) => Promise<void>>;
  /** A hash of what the parts write (at most 32 characters, kept in the cursor row while a pass is open). */
  digest: string;
}

const NOTHING: PreparedWrites = { parts: [], digest: '' };

/**
 * A consumer defined by its `prepare` alone: `handle` (PostgreSQL, and any caller inside a
 * transaction) prepares on the transaction and writes every part at once.
 */
export function preparedConsumer(consumer: Omit<OutboxConsumer, 'handle' | 'prepare'> & Required<Pick<OutboxConsumer, 'prepare'>>): OutboxConsumer {
  return {
    ...consumer,
    handle: async (trx, events, now) => {
      for (const part of (await consumer.prepare(trx, events, now)).parts) await part(trx);
    },
  };
}

/** Where a runner reports a failed pass: the server's logger, or the stats thread's relay of it. */
export interface RunnerLog {
  warn(obj: object, msg: string): void;
}

export interface OutboxRunnerDeps {
  db: Knex;
  now: () => number;
  logger: RunnerLog;
}

/** How a runner paces its passes; the defaults suit the event loop's consumers. */
export interface OutboxRunnerOptions {
  /** Events read per pass and consumer (BATCH). */
  batch?: number;
  /** The shortest time between the starts of two rounds of passes (MIN_GAP_MS). */
  minGapMs?: number;
  /**
   * Under load, longer rounds: once the rounds of the last half second or more have read events at
   * `eventsPerSecond` or more, the next round starts at most `gapMs` after the last one. A quiet or
   * moderately busy server keeps `minGapMs`.
   */
  busy?: { eventsPerSecond: number; gapMs: number };
}

/** Events read per pass and consumer: bounds a transaction's length. */
const BATCH = 200;
/** How often a process looks for events that other processes wrote. */
export const POLL_MS = 1000;
/** How long `drain` waits for transactions older than the newest event to end (PostgreSQL). */
const DRAIN_WAIT_MS = 10_000;
/** The shortest time between the starts of two passes of one process. */
const MIN_GAP_MS = 100;

/** The shortest time over which a round's rate of events is judged (OutboxRunnerOptions.busy). */
const BUSY_WINDOW_MS = 500;

/** The advisory lock class of consumer passes (PostgreSQL): "RFTR". */
const CONSUMER_LOCK_CLASS = 0x52465452;

interface Window {
  after: OutboxPosition;
  events: StoredEvent[];
  last: OutboxPosition;
  /** Whether more events may follow the window: a full batch, or the end of a resumed pass. */
  more: boolean;
  /** A chunked pass that a dead thread left open: its parts committed so far, and its rows' digest. */
  resume?: { done: number; digest: string };
}

// Every pass of every consumer reads and moves its cursor: fixed texts (db/statement.ts), which
// PostgreSQL plans once per connection rather than once per pass (docs/performance.md, "Plans made
// once").
const CURSOR = 'select last_txid, last_id, pass_last_txid, pass_last_id, pass_parts_done, pass_digest from outbox_cursors where consumer = ? limit 1';
const CURSOR_FROM = 'where consumer = ? and last_txid = ? and last_id = ? and pass_parts_done = ?';
const CURSOR_MOVE = `update outbox_cursors set last_txid = ?, last_id = ?, updated_at = ?, pass_last_txid = null, pass_last_id = null, pass_parts_done = 0, pass_digest = null ${CURSOR_FROM}`;
const CURSOR_PART_DONE = `update outbox_cursors set pass_last_txid = ?, pass_last_id = ?, pass_parts_done = ?, pass_digest = ?, updated_at = ? ${CURSOR_FROM}`;
const CONSUMER_LOCK = 'select pg_try_advisory_xact_lock(?, hashtext(current_schema() || ?)) as held';

interface CursorRow {
  last_txid: unknown;
  last_id: unknown;
  pass_last_txid: unknown;
  pass_last_id: unknown;
  pass_parts_done: unknown;
  pass_digest: unknown;
}

/** The consumer's cursor and its next events (or the events of its open pass); null when there is no cursor or nothing new. */
async function readWindow(q: Knex | Knex.Transaction, consumer: OutboxConsumer, batch: number): Promise<Window | null> {
  const cursor = await firstRow<CursorRow>(q, CURSOR, [consumer.name]);
  if (!cursor) return null;
  const after: OutboxPosition = { txid: Number(cursor.last_txid), id: Number(cursor.last_id) };
  if (cursor.pass_last_id != null) {
    const last: OutboxPosition = { txid: Number(cursor.pass_last_txid), id: Number(cursor.pass_last_id) };
    const events = await readEventsThrough(q, after, last, consumer.types);
    return { after, events, last, more: true, resume: { done: Number(cursor.pass_parts_done), digest: String(cursor.pass_digest ?? '') } };
  }
  if (consumer.idle && (await consumer.idle(q))) {
    const tail = await visibleTail(q, after);
    return tail === null ? null : { after, events: [], last: tail, more: false };
  }
  const { events, last, scanned } = await readEventsAfter(q, after, batch, consumer.types);
  return last === null ? null : { after, events, last, more: scanned === batch };
}

/**
 * Moves the cursor past a pass's events — only from where the pass read it, and after as many
 * parts as it wrote: a cursor moved meanwhile (`stats rebuild`, or another writer of the same
 * pass) rolls the pass back. Closes an open chunked pass.
 */
async function moveCursor(trx: Knex.Transaction, consumer: OutboxConsumer, after: OutboxPosition, last: OutboxPosition, now: number, partsDone = 0): Promise<void> {
  const moved = await changedRows(trx, CURSOR_MOVE, [last.txid, last.id, now, consumer.name, after.txid, after.id, partsDone]);
  if (moved !== 1) throw new Error(`outbox consumer ${consumer.name}: its cursor moved during the pass`);
}

/** A chunked pass's part committed (not its last): the cursor row keeps the pass's end, its progress and its digest. */
async function markPartDone(trx: Knex.Transaction, consumer: OutboxConsumer, after: OutboxPosition, last: OutboxPosition, partsDone: number, digest: string, now: number): Promise<void> {
  const moved = await changedRows(trx, CURSOR_PART_DONE, [last.txid, last.id, partsDone + 1, digest, now, consumer.name, after.txid, after.id, partsDone]);
  if (moved !== 1) throw new Error(`outbox consumer ${consumer.name}: its cursor moved during the pass`);
}

/**
 * PostgreSQL: whether this transaction now holds the consumer's pass (a peer process holding it
 * makes this pass skip the consumer). An advisory lock, not `FOR UPDATE` on the cursor row: a row
 * lock gives the transaction an id at once, and a running transaction id holds back every
 * consumer's view of the outbox (readEventsAfter reads only transactions older than every running
 * one), so a stats pass reading and summing 200 events delayed the webhook deliveries of every
 * sale committed meanwhile. Held this way, the pass takes an id only at its first write. Keyed by
 * schema too: servers of other schemas in one database do not share passes.
 */
async function holdsConsumerLock(trx: Knex.Transaction, consumer: string): Promise<boolean> {
  const row = await firstRow<{ held: boolean }>(trx, CONSUMER_LOCK, [CONSUMER_LOCK_CLASS, `:${consumer}`]);
  return row?.held === true;
}

export class OutboxRunner {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private prepared = false;
  private delayed?: NodeJS.Timeout;
  private lastStart = 0;
  private lastClicksPoke = 0;
  private readonly batch: number;
  private readonly minGapMs: number;
  private readonly busy?: { eventsPerSecond: number; gapMs: number };
  /** Events read by the round in progress, and whether the last round found the process under load. */
  private roundRead = 0;
  private underLoad = false;
  private windowStart = Date.now();
  private windowRead = 0;

  constructor(
    private readonly deps: OutboxRunnerDeps,
    private readonly consumers: readonly OutboxConsumer[],
    options: OutboxRunnerOptions = {},
  ) {
    this.batch = options.batch ?? BATCH;
    this.minGapMs = options.minGapMs ?? MIN_GAP_MS;
    this.busy = options.busy;
  }

  /** Runs a pass now and then every `pollMs`; the timer never keeps the process alive. */
  start(pollMs = POLL_MS): void {
    this.poke();
    // A pass that started within the last half interval (poked by this process's commits) has
    // just read what the poll would: the next tick looks again.
    this.timer = setInterval(() => {
      if (Date.now() - this.lastStart >= pollMs / 2) this.poke();
    }, pollMs);
    this.timer.unref();
  }

  /**
   * After a click batch committed its `clicks.recorded` events: a pass at most once per POLL_MS
   * from here. Batches commit hundreds of times a second under load, and a pass per batch cost the
   * SQLite click route a fifth of its rate (docs/performance.md); but the first click on a quiet
   * server reaches the stats at once instead of at the next poll.
   */
  clicksCommitted(): void {
    const now = Date.now();
    if (now - this.lastClicksPoke < POLL_MS) return;
    this.lastClicksPoke = now;
    this.poke();
  }

  /**
   * Asks for a pass soon (after this process committed events); passes never overlap. Under load
   * every group commit pokes: passes start at most every MIN_GAP_MS, so a busy process reads the
   * outbox in batches instead of once per commit (measured: a pass per commit cost the lead and
   * sale routes a tenth of their rate on SQLite).
   */
  poke(): void {
    if (this.stopped) return;
    if (this.running || this.delayed) {
      if (this.running) this.again = true;
      return;
    }
    const wait = this.lastStart + (this.underLoad && this.busy ? this.busy.gapMs : this.minGapMs) - Date.now();
    if (wait > 0) {
      this.delayed = setTimeout(() => {
        this.delayed = undefined;
        this.poke();
      }, wait);
      this.delayed.unref();
      return;
    }
    this.lastStart = Date.now();
    this.running = this.passAll().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.poke();
      }
    });
  }

  /**
   * Handles everything committed before the call, for every consumer (tests, operator commands).
   * On PostgreSQL a pass reads only events of transactions older than every transaction still
   * running anywhere in the cluster (readEventsAfter), so a pass alone can stop short of an event
   * that has committed while some other, older transaction — another database's, even — is still
   * open. `drain` therefore notes the newest committed event first and passes again, briefly
   * waiting, until every cursor has reached it or `waitMs` has passed.
   */
  async drain(waitMs = DRAIN_WAIT_MS): Promise<void> {
    // On SQLite a pass sees every committed row: one round of passes is enough.
    const target = isSqlite(this.deps.db) ? null : await outboxTail(this.deps.db).catch(() => null);
    const deadline = Date.now() + waitMs;
    for (;;) {
      await this.exclusiveRound();
      if (target === null || this.stopped || Date.now() >= deadline || (await this.reached(target).catch(() => true))) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /**
   * A round of `drain`, never beside a poked one: two rounds reading the same cursor would both
   * prepare, and the one that commits second fails with "cursor moved" and ends its round there —
   * a drain's round would return before its later consumers had run (seen as a stats drain that
   * counted nothing). Pokes meanwhile are kept for after it.
   */
  private async exclusiveRound(): Promise<void> {
    while (this.running) await this.running;
    const round: Promise<void> = this.passAll().finally(() => {
      if (this.running === round) this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.poke();
      }
    });
    this.running = round;
    await round;
  }

  /** Whether every consumer's cursor is at or past `target`. */
  private async reached(target: OutboxPosition): Promise<boolean> {
    const behind = await this.deps
      .db('outbox_cursors')
      .whereIn(
        'consumer',
        this.consumers.map((c) => c.name),
      )
      .whereRaw('(last_txid, last_id) < (?, ?)', [target.txid, target.id])
      .first('consumer');
    return !behind;
  }

  /** One round of passes: every consumer until it has read what is visible now. */
  private async passAll(): Promise<void> {
    const started = Date.now();
    this.roundRead = 0;
    try {
      await this.prepare();
      // Round robin: a consumer with more to read gets its next batch after every other consumer's,
      // so a slow one (the stats rollups of a burst of sales) does not hold webhook deliveries back
      // until it has caught up. Between two passes the event loop serves the requests that arrived
      // meanwhile: on SQLite a pass runs synchronously, and a second of click batches read back to
      // back (three passes of ~3 ms) held every request behind them — the click lane's p99 doubled.
      let behind = [...this.consumers];
      while (behind.length > 0 && !this.stopped) {
        const more: OutboxConsumer[] = [];
        for (const consumer of behind) {
          if (await this.pass(consumer)) more.push(consumer);
          await new Promise(setImmediate);
        }
        behind = more;
      }
    } catch (err) {
      // The database may be down: the next poke or poll tries again from the same cursor.
      this.deps.logger.warn({ err }, 'outbox pass failed; it is retried');
    }
    if (this.busy) {
      // The rate over rounds of half a second at least, so that a burst of a few dozen events (a
      // page of test clicks) is not load, and 100 ms rounds are judged together.
      this.windowRead += this.roundRead;
      // A round reads what was committed since the round before it started: the window's events
      // were committed between its start and this round's.
      const elapsed = started - this.windowStart;
      if (elapsed >= BUSY_WINDOW_MS) {
        this.underLoad = (this.windowRead * 1000) / elapsed >= this.busy.eventsPerSecond;
        this.windowStart = started;
        this.windowRead = 0;
      }
    }
  }

  /** Stops the timer and waits for a pass in progress (before the database pool closes). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.delayed) clearTimeout(this.delayed);
    await this.running;
  }

  /** Each consumer has its cursor row before any pass locks it. */
  private async prepare(): Promise<void> {
    if (this.prepared) return;
    const now = this.deps.now();
    for (const { name } of this.consumers) {
      await this.deps.db('outbox_cursors').insert({ consumer: name, last_txid: 0, last_id: 0, updated_at: now }).onConflict('consumer').ignore();
    }
    this.prepared = true;
  }

  /** One batch for one consumer; whether more events may follow it (false: all read, or a peer has the cursor). */
  private async pass(consumer: OutboxConsumer): Promise<boolean> {
    const { db } = this.deps;
    if (consumer.prepare && isSqlite(db)) return this.preparedPass(consumer, consumer.prepare);
    let handled = false;
    const more = await db.transaction(async (trx) => {
      if (!isSqlite(trx) && !(await holdsConsumerLock(trx, consumer.name))) return false;
      const window = await readWindow(trx, consumer, this.batch);
      if (!window) return false;
      const { after, events, last, more } = window;
      this.roundRead += events.length;
      const now = this.deps.now();
      if (events.length > 0) await consumer.handle(trx, events, now);
      handled = events.length > 0;
      await moveCursor(trx, consumer, after, last, now);
      return more;
    });
    if (handled) consumer.committed?.();
    return more;
  }

  /**
   * SQLite, a consumer with `prepare`: the cursor, the events and the consumer's reads outside any
   * transaction (SQLite has one writer, and this thread's connection sees every commit), then the
   * parts it answers, each in a write transaction of its own — a chunked pass. The stats thread
   * reads thousands of events a pass (jobs/stats.worker.ts) and their rows take a few thousand per
   * part, so it holds the file's one write lock for milliseconds at a time, and between two parts a
   * request waiting for the lock takes it first (yieldWriteLock).
   *
   * Exactly once: every part but the last also notes in the cursor row where the pass ends, how
   * many parts have committed and the rows' digest; the last part moves the cursor and clears
   * them. A thread that dies mid-pass leaves the pass open, and the next pass reads the same
   * events again (readEventsThrough), prepares the same parts and commits only those not yet
   * committed. Every write is conditional on the position and progress read, so a cursor moved in
   * between (`stats rebuild`) rolls the part back and the next pass starts from where it is.
   */
  private async preparedPass(consumer: OutboxConsumer, prepare: NonNullable<OutboxConsumer['prepare']>): Promise<boolean> {
    const { db } = this.deps;
    const window = await readWindow(db, consumer, this.batch);
    if (!window) return false;
    const { after, events, last, more, resume } = window;
    this.roundRead += events.length;
    const now = this.deps.now();
    const prepared = events.length > 0 ? await prepare(db, events, now) : NOTHING;
    const { parts } = prepared;
    let done = resume?.done ?? 0;
    // Only if what the rows are read from changed (a server of another version prepared them): the
    // parts not yet committed are written all the same, and the stats may be off until a rebuild.
    // (`digest` is read only here and for a pass of two or more parts: it may be computed on demand.)
    if (resume && resume.digest !== prepared.digest) this.deps.logger.warn({ consumer: consumer.name, parts_done: done }, 'an interrupted outbox pass prepared other rows when it resumed; its remaining parts are written (run `reftrack-server stats rebuild` if the stats look off)');
    for (;;) {
      const part = parts[done];
      const final = done >= parts.length - 1;
      const partsDone = done;
      await db.transaction(async (trx) => {
        if (part) await part(trx);
        if (final) await moveCursor(trx, consumer, after, last, now, partsDone);
        else await markPartDone(trx, consumer, after, last, partsDone, prepared.digest, now);
      });
      if (final) break;
      done++;
      await yieldWriteLock(db);
    }
    if (parts.length > 0) consumer.committed?.();
    return more;
  }
}
