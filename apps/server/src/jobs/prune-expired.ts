/**
 * Deletes rows whose life is over, so that no table grows from traffic that proves nothing (every
 * `POST /api/v1/cli/auth/start` stores a login session; every sign-in remembers its id_token) and
 * dead credentials do not pile up. Every server process runs it at start and then every
 * PRUNE_INTERVAL_MS; `reftrack-server prune` runs it once. Deletes are idempotent, so several
 * processes pruning at once only share the work.
 *
 * Each kind of row is one `Pruner` below: a later retention rule (logs, deliveries) is one more
 * entry. A pruner deletes in batches, so one run never holds SQLite's write lock, or
 * PostgreSQL's row locks, for long.
 */
import type { Knex } from 'knex';
import type { Logger } from '../logger.js';
import { isSqlite } from '../db/knex.js';

/**
 * An expired CLI login session is kept this long after its 5 minutes, so that a late poll still
 * answers `status: expired` (3.4) rather than 404 `Session not found`; the CLI stops polling at
 * the deadline, so an hour covers any clock skew or slow client by far.
 */
export const CLI_LOGIN_SESSION_GRACE_MS = 60 * 60_000;
export const PRUNE_INTERVAL_MS = 10 * 60_000;
/** Outbox events are kept this long (docs/architecture.md): time to look into a consumer's backlog. */
export const OUTBOX_RETENTION_MS = 7 * 86_400_000;
const BATCH = 1000;
/**
 * Outbox events and webhook deliveries carry their payloads, and SQLite deletes them in the event
 * loop: a batch of 250 outbox rows is about 3 ms of the loop here, where 1,000 took 11–16 ms.
 */
const SQLITE_PAYLOAD_BATCH = 250;
const payloadBatch = (db: Knex): number => (isSqlite(db) ? SQLITE_PAYLOAD_BATCH : BATCH);
/** Finished webhook deliveries (succeeded, or failed for good) and their attempts are kept this long: the delivery log's reach. */
export const WEBHOOK_DELIVERY_RETENTION_MS = 30 * 86_400_000;

/** Retention an operator sets (config.ts). */
export interface PruneOptions {
  /** Tracking log entries older than this are deleted; 0 keeps them. */
  trackingLogRetentionDays: number;
}

export const DEFAULT_PRUNE_OPTIONS: PruneOptions = { trackingLogRetentionDays: 90 };
/** Mail rows of any state are kept this long; a message still unsent after 30 days is dropped with them. */
export const MAIL_RETENTION_MS = 30 * 86_400_000;

export interface Pruner {
  /** Names the rows in the report and the log. */
  name: string;
  prune(db: Knex, now: number, options: PruneOptions): Promise<number>;
}

/** Deletes the rows of `table` whose `column` is at or before `cutoff`, `BATCH` at a time. */
async function deleteWhereAtOrBefore(db: Knex, table: string, key: string, column: string, cutoff: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await db(table)
      .whereIn(key, db(table).select(key).where(column, '<=', cutoff).limit(BATCH))
      .delete();
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

/**
 * Outbox events older than the retention that every consumer has passed, oldest first. An event's
 * time is the time of its write, so the outbox's order is its time order (up to the clocks of
 * concurrent writers): a batch reads the oldest passed events with their time and deletes the
 * leading run of them that is older than the retention, and the pass ends at the first event still
 * within it, whatever follows. So a pass reads only what it deletes and one event more: `occurred_at`
 * has no index, and the filter `occurred_at <= cutoff` read every event up to the slowest cursor
 * looking for old ones — on SQLite inside the event loop: 134 ms at a benchmark server's start, and
 * a week of a busy server's events would have taken seconds every ten minutes (docs/performance.md,
 * "Scans that grew with the outbox"). An event a lagging consumer has not
 * handled is kept, however old.
 */
async function pruneOutbox(db: Knex, now: number): Promise<number> {
  const slowest = await db('outbox_cursors').orderBy([{ column: 'last_txid' }, { column: 'last_id' }]).first('last_txid', 'last_id');
  const passed = (q: Knex.QueryBuilder): Knex.QueryBuilder =>
    !slowest ? q : isSqlite(db) ? q.where('id', '<=', slowest.last_id) : q.whereRaw('(txid, id) <= (?, ?)', [slowest.last_txid, slowest.last_id]);
  const cutoff = now - OUTBOX_RETENTION_MS;
  const batch = payloadBatch(db);
  let total = 0;
  for (;;) {
    const rows = await passed(db('outbox_events').select('id', 'occurred_at')).orderBy('id').limit(batch);
    const expired: number[] = [];
    for (const row of rows) {
      if (Number(row.occurred_at) > cutoff) break;
      expired.push(Number(row.id));
    }
    if (expired.length > 0) total += await db('outbox_events').whereIn('id', expired).delete();
    if (expired.length < batch) return total;
    // SQLite runs the deletes in the event loop: requests go first between two batches.
    await new Promise(setImmediate);
  }
}

/**
 * Webhook deliveries past their last retry, older than the retention, with their attempts; pending
 * ones are never touched. Oldest first, as the outbox: a delivery's time is the time it was
 * written, so a pass walks the ids from the oldest and ends at the first delivery still within the
 * retention. Finding them by `status` and `created_at` instead read every finished delivery the
 * table held (one per event and endpoint, kept 30 days) at every pass.
 */
async function pruneWebhookDeliveries(db: Knex, now: number): Promise<number> {
  const cutoff = now - WEBHOOK_DELIVERY_RETENTION_MS;
  const batch = payloadBatch(db);
  let total = 0;
  let after = 0;
  for (;;) {
    const rows = await db('webhook_deliveries').where('id', '>', after).orderBy('id').limit(batch).select('id', 'status', 'created_at');
    const finished: number[] = [];
    let within = rows.length < batch;
    for (const row of rows) {
      if (Number(row.created_at) > cutoff) {
        within = true;
        break;
      }
      after = Number(row.id);
      if (row.status === 'succeeded' || row.status === 'failed') finished.push(after);
    }
    if (finished.length > 0) {
      await db.transaction(async (trx) => {
        await trx('webhook_attempts').whereIn('delivery_id', finished).delete();
        total += await trx('webhook_deliveries').whereIn('id', finished).delete();
      });
    }
    if (within) return total;
    await new Promise(setImmediate);
  }
}

export const PRUNERS: readonly Pruner[] = [
  // Unauthenticated: one per `auth/start`, whatever became of it (pending, complete, consumed).
  { name: 'cli_login_sessions', prune: (db, now) => deleteWhereAtOrBefore(db, 'cli_login_sessions', 'id', 'expires_at', now - CLI_LOGIN_SESSION_GRACE_MS) },
  // A used id_token is remembered until its own `exp`; after that it no longer verifies anyway.
  { name: 'used_id_tokens', prune: (db, now) => deleteWhereAtOrBefore(db, 'used_id_tokens', 'use_key', 'expires_at', now) },
  { name: 'dashboard_sessions', prune: (db, now) => deleteWhereAtOrBefore(db, 'dashboard_sessions', 'id', 'expires_at', now) },
  // Revoked tokens stay listed (with their revocation time) until they would have expired.
  { name: 'cli_tokens', prune: (db, now) => deleteWhereAtOrBefore(db, 'cli_tokens', 'id', 'expires_at', now) },
  { name: 'outbox_events', prune: pruneOutbox },
  { name: 'webhook_deliveries', prune: pruneWebhookDeliveries },
  // The tracking log (a line per test event and synthetic chain) is written for people reading it
  // now; nothing reads old entries back.
  {
    name: 'tracking_logs',
    prune: (db, now, { trackingLogRetentionDays: days }) => (days === 0 ? Promise.resolve(0) : deleteWhereAtOrBefore(db, 'tracking_logs', 'id', 'created_at', now - days * 86_400_000)),
  },
  // The partner portal (docs/partners.md): expired sessions and sign-in links (a link's 15-minute
  // life is also the per-address rate window, so an expired one no longer counts), and mail that
  // was sent or failed for good more than 30 days ago (the development mailbox's reach).
  { name: 'portal_sessions', prune: (db, now) => deleteWhereAtOrBefore(db, 'portal_sessions', 'id', 'expires_at', now) },
  { name: 'portal_sign_in_tokens', prune: (db, now) => deleteWhereAtOrBefore(db, 'portal_sign_in_tokens', 'id', 'expires_at', now) },
  { name: 'mail_messages', prune: (db, now) => deleteWhereAtOrBefore(db, 'mail_messages', 'id', 'created_at', now - MAIL_RETENTION_MS) },
];

export type PruneReport = Record<string, number>;

/** One pass of every pruner at `now`; how many rows each deleted. */
export async function pruneExpired(db: Knex, now: number, options: PruneOptions = DEFAULT_PRUNE_OPTIONS): Promise<PruneReport> {
  const report: PruneReport = {};
  for (const pruner of PRUNERS) report[pruner.name] = await pruner.prune(db, now, options);
  return report;
}

export interface PruneSchedule {
  /** Stops the timer and waits for a pass in progress (before the database pool closes). */
  stop(): Promise<void>;
}

export interface PruneDeps {
  db: Knex;
  now: () => number;
  logger: Logger;
  options?: PruneOptions;
}

/** Runs a pass now and then every `intervalMs`; the timer never keeps the process alive. */
export function schedulePruning(deps: PruneDeps, intervalMs = PRUNE_INTERVAL_MS): PruneSchedule {
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = () => {
    // A pass still running (a huge backlog, a slow database) is not joined by a second one.
    if (running || stopped) return;
    running = pruneExpired(deps.db, deps.now(), deps.options)
      .then(
        (report) => {
          if (Object.values(report).some((n) => n > 0)) deps.logger.info({ pruned: report }, 'pruned expired rows');
        },
        (err: unknown) => deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'pruning expired rows failed; retried at the next interval'),
      )
      .finally(() => {
        running = undefined;
      });
  };
  pass();
  const timer = setInterval(pass, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
