/**
 * PostgreSQL: hears every change to program keys, so that a process may keep the keys it has read
 * for longer than the half second that otherwise bounds how stale a cached key can be (5.4: the old
 * key stops working at the moment of regeneration, also on the other processes).
 *
 * The trigger of migration 20261128120000 announces each change on the channel PROGRAM_KEYS_CHANNEL
 * with the table's schema as payload, whatever wrote it (a dashboard, the operator command in
 * another process, a statement typed in psql). This watcher LISTENs on a connection of its own and
 * counts the changes of its schema in `generation`; a cached key read under an older generation is
 * no longer trusted.
 *
 * A LISTEN can stop hearing without anyone noticing: a half-open connection, or PgBouncer in
 * transaction mode, which does not pass notifications on. So the watcher proves it hears: every
 * PING_MS it sends a notice of its own through the background pool, and trusts itself only while
 * the last ping it heard was sent less than TRUST_MS ago. PostgreSQL delivers a session's
 * notifications in the order their transactions committed, so a ping heard means every change
 * committed before the ping was sent has been heard too. When it cannot prove it, the keys' cache
 * falls back to its half second (auth/program-key.ts), and a silent break leaves a key stale for at
 * most TRUST_MS.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import type { Db } from './knex.js';

export const PROGRAM_KEYS_CHANNEL = 'reftrack_program_keys';
/** How often the watcher proves it hears. Two small statements a second per process. */
const PING_MS = 500;
/** How long a heard ping vouches for the watcher: bounds a key's staleness if notices stop silently. */
const TRUST_MS = 1_000;
/** Listening this long without hearing its own pings is worth a line in the log. */
const DEAF_AFTER_MS = 5_000;
/** How long a connect or its LISTEN may take, and how long a close waits for the database's goodbye. */
const CONNECT_TIMEOUT_MS = 10_000;
const CLOSE_WAIT_MS = 1_000;
/** Back-off of the reconnection after the listening connection is lost. */
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/** What a cache needs of a watcher (auth/program-key.ts). */
export interface KeyChangeWatch {
  /** Counts the changes heard (and the losses of the connection): a key read under an older value is stale. */
  readonly generation: number;
  /** Whether every change committed up to about now has been heard. */
  trusted(now: number): boolean;
}

export interface NoticeLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export class ProgramKeyNotices implements KeyChangeWatch {
  generation = 0;
  private client: pg.Client | undefined;
  private schema: string | undefined;
  private heardSentAt = -Infinity;
  private readonly pingsSent = new Map<number, number>();
  private pingSeq = 0;
  private readonly nonce = crypto.randomBytes(6).toString('hex');
  private pingTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelay = RECONNECT_MIN_MS;
  private listening = false;
  private listeningSince = 0;
  /** Whether the log says notices are not arriving (said once per change of state). */
  private deaf = false;
  /** Whether the log says it cannot listen (said once until it listens again). */
  private failing = false;
  private stopped = false;

  /**
   * @param connectionString the server's PostgreSQL address (a connection of its own, outside the pools)
   * @param pings the background jobs' pool, through which the pings are sent (and the schema read)
   */
  constructor(
    private readonly connectionString: string,
    private readonly pings: Db,
    private readonly log: NoticeLog,
  ) {}

  /** The listening connection's backend (pg_stat_activity.pid, application_name 'reftrack key notices'). */
  get backendPid(): number | undefined {
    return (this.client as (pg.Client & { processID?: number }) | undefined)?.processID;
  }

  trusted(now: number): boolean {
    return this.listening && now - this.heardSentAt < TRUST_MS;
  }

  async start(): Promise<void> {
    this.pingTimer = setInterval(() => void this.ping(), PING_MS);
    this.pingTimer.unref();
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.reconnectTimer);
    this.lost();
    const client = this.client;
    this.client = undefined;
    if (client) await closeClient(client);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    // Bounded waits and TCP keep-alives: a database behind a dead link must not leave the watch
    // waiting for ever on a connect or its LISTEN (it would never listen again once the link is back).
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'reftrack key notices',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', (msg) => this.heard(msg.payload ?? ''));
    client.on('error', () => this.dropped(client));
    client.on('end', () => this.dropped(client));
    try {
      // The schema the server's tables are in, as the trigger names it (tests run one per schema).
      this.schema ??= String((await this.pings.raw('select current_schema() as s')).rows[0].s);
      await client.connect();
      await client.query(`listen ${PROGRAM_KEYS_CHANNEL}`);
      if (this.client !== client) return;
      this.listening = true;
      this.listeningSince = Date.now();
      this.reconnectDelay = RECONNECT_MIN_MS;
      this.failing = false;
      this.log.info({ channel: PROGRAM_KEYS_CHANNEL }, 'listening for program key changes');
      void this.ping();
    } catch (err) {
      if (!this.failing) this.log.warn({ err: (err as Error).message }, 'cannot listen for program key changes: keys are cached for half a second until it can');
      this.failing = true;
      this.dropped(client);
    }
  }

  /** The listening connection is gone: distrust every cached key, and listen again after a pause. */
  private dropped(client: pg.Client): void {
    if (this.client !== client) return;
    const wasListening = this.listening;
    this.lost();
    this.client = undefined;
    void closeClient(client);
    if (this.stopped) return;
    if (wasListening && !this.failing) this.log.warn({ channel: PROGRAM_KEYS_CHANNEL }, 'stopped listening for program key changes: keys are cached for half a second until it resumes');
    this.reconnectTimer = setTimeout(() => void this.connect(), this.reconnectDelay);
    this.reconnectTimer.unref();
    this.reconnectDelay = Math.min(this.reconnectDelay * 2, RECONNECT_MAX_MS);
  }

  private lost(): void {
    this.listening = false;
    this.generation++;
    this.pingsSent.clear();
  }

  private heard(payload: string): void {
    if (payload === this.schema) {
      this.generation++;
      return;
    }
    // `<schema> ping <nonce> <seq>`: only this watcher's own pings vouch for it.
    const [schema, kind, nonce, seq] = payload.split(' ');
    if (schema !== this.schema || kind !== 'ping' || nonce !== this.nonce) return;
    const sentAt = this.pingsSent.get(Number(seq));
    if (sentAt === undefined) return;
    for (const s of this.pingsSent.keys()) if (s <= Number(seq)) this.pingsSent.delete(s);
    this.heardSentAt = Math.max(this.heardSentAt, sentAt);
    if (this.deaf) {
      this.deaf = false;
      this.log.info({ channel: PROGRAM_KEYS_CHANNEL }, 'program key notices arrive again');
    }
  }

  private async ping(): Promise<void> {
    if (!this.listening || this.schema === undefined) return;
    const now = Date.now();
    if (!this.deaf && !this.trusted(now) && now - this.listeningSince > DEAF_AFTER_MS) {
      this.deaf = true;
      this.log.warn({ channel: PROGRAM_KEYS_CHANNEL }, 'program key notices are not arriving (PgBouncer in transaction mode passes none on): keys are cached for half a second');
    }
    const seq = ++this.pingSeq;
    // Pings not heard are forgotten after a while; the map never holds more than a few.
    if (this.pingsSent.size > 20) this.pingsSent.clear();
    this.pingsSent.set(seq, Date.now());
    try {
      await this.pings.raw('select pg_notify(?, ?)', [PROGRAM_KEYS_CHANNEL, `${this.schema} ping ${this.nonce} ${seq}`]);
    } catch {
      // The database is unreachable: the ping is not heard, and trust lapses by itself.
    }
  }
}

/** Ends a connection politely, or drops it when the database does not answer (a dead link). */
async function closeClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(() => true, () => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!ended) (client as pg.Client & { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
