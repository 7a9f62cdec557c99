/**
 * The delivery worker of outbound webhooks (docs/webhooks.md, "Delivery"). Every server process
 * runs one, apart from any request: it claims due deliveries, sends each (signed, through the
 * guarded sender), and records the outcome.
 *
 * - **One attempt at a time per delivery, across processes.** A claim sets the delivery's lease
 *   (`lease_until`, `lease_owner`) in one statement that only takes rows whose lease is free; on
 *   PostgreSQL the candidates are read `FOR UPDATE SKIP LOCKED`, so two processes never wait on
 *   each other's rows. The outcome is recorded only while the lease is still this claim's.
 * - **A crash mid-attempt means a retry.** The attempt number is counted at the claim; a process
 *   that dies leaves its lease to expire (the attempt's time limit and a margin), after which any
 *   process claims the delivery again — with the same `webhook-id` and body. At least once: the
 *   receiver may see a duplicate, never a gap.
 * - **Few writes.** Claims take up to a batch at once, and outcomes are written in batches (every
 *   RECORD_MS or RECORD_BATCH outcomes, one transaction): on SQLite every transaction waits for the
 *   one writer the tracking routes use too, and one per attempt measured a sale rate cut by 70%.
 *   An outcome not yet written when the process dies is an attempt whose lease expires: a retry.
 * - **Retries** follow webhooks/schedule.ts for 3 days; an endpoint whose deliveries have all failed
 *   for 3 days is disabled, with a `webhook_endpoint.disabled` event (the audit log and the
 *   dashboard's notice) and an e-mail to the workspace's owners (webhooks/disabled-notice.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { WEBHOOK_LIMITS } from '@reftrack/contract';
import { isSqlite } from '../db/knex.js';
import { appendEvents } from '../db/outbox.js';
import type { Logger } from '../logger.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { WebhookSender, type AttemptOutcome } from '../webhooks/sender.js';
import { signedHeaders } from '../webhooks/signing.js';
import { auditUrl, signingSecrets } from '../webhooks/endpoints.js';
import { nextAttemptAt } from '../webhooks/schedule.js';
import { onDeliveriesQueued } from '../webhooks/wakeup.js';
import { queueDisabledNotice } from '../webhooks/disabled-notice.js';

export interface WebhookWorkerDeps {
  db: Knex;
  secrets: SecretBox;
  now: () => number;
  logger: Logger;
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /** Attempts in flight at once in this process. */
  concurrency?: number;
  /** The server's public address, for the link in the e-mail to owners when an endpoint is disabled. */
  publicBaseUrl?: string;
}

interface Claimed {
  id: number;
  endpointId: number;
  messageId: string;
  payload: string;
  attempt: number;
  retryUntil: number;
  url: string;
  secretsSealed: string;
  previousExpiresAt: number | null;
  lease: string;
}

/** How often a process looks for due deliveries (retries, and those other processes queued). */
export const WORKER_POLL_MS = 1000;
/** Outcomes are written at least this often… */
const RECORD_MS = 50;
/** …or as soon as this many wait. */
const RECORD_BATCH = 100;

interface Outcome {
  claimed: Claimed;
  startedAt: number;
  outcome: AttemptOutcome;
}

export class WebhookWorker {
  private readonly sender: WebhookSender;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly inFlight = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private claiming?: Promise<void>;
  private again = false;
  private stopped = false;
  private outcomes: Outcome[] = [];
  private recordTimer?: NodeJS.Timeout;
  private recording: Promise<void> = Promise.resolve();

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.timeoutMs = deps.timeoutMs ?? WEBHOOK_LIMITS.timeoutMs;
    this.concurrency = deps.concurrency ?? 64;
    this.sender = new WebhookSender({ allowPrivateTargets: deps.allowPrivateTargets, timeoutMs: this.timeoutMs });
  }

  /** A lease outlives an attempt's time limit by a margin: only a dead process's lease expires. */
  get leaseMs(): number {
    return this.timeoutMs + 5_000;
  }

  start(pollMs = WORKER_POLL_MS): void {
    this.unsubscribe = onDeliveriesQueued(() => this.poke());
    this.timer = setInterval(() => this.poke(), pollMs);
    this.timer.unref();
    this.poke();
  }

  /** Claims and starts due deliveries soon; claims never overlap within a process. */
  poke(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.fill()
      .catch((err) => this.deps.logger.warn({ err }, 'webhook claim failed; it is retried'))
      .finally(() => {
        this.claiming = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          this.poke();
        }
      });
  }

  /** Sends every delivery due now and waits for the attempts (tests, operator commands). */
  async runDue(): Promise<void> {
    for (;;) {
      while (this.claiming) await this.claiming;
      const claimed = await this.claim(this.concurrency);
      for (const c of claimed) this.track(c);
      // Done only when no background claim runs either: one that started while this claim ran
      // (a wake-up, the poll) may hold rows this one skipped (SKIP LOCKED on PostgreSQL), and it
      // adds its attempts to inFlight only when it ends.
      if (claimed.length === 0 && this.inFlight.size === 0 && !this.claiming) return this.flush();
      await Promise.all([...this.inFlight]);
      await this.flush();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    await this.claiming;
    await Promise.all([...this.inFlight]);
    await this.flush();
    this.sender.close();
  }

  private async fill(): Promise<void> {
    while (!this.stopped) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0) return;
      const claimed = await this.claim(free);
      for (const c of claimed) this.track(c);
      if (claimed.length < free) return;
    }
  }

  private track(c: Claimed): void {
    const run = this.attempt(c)
      .catch((err) => this.deps.logger.warn({ err, delivery: c.id }, 'webhook attempt could not be recorded; its lease expires and it is tried again'))
      .finally(() => {
        this.inFlight.delete(run);
        // Claim again once half the slots are free, not after every attempt: a claim is a write.
        if (this.inFlight.size <= this.concurrency / 2) this.poke();
      });
    this.inFlight.add(run);
  }

  /** Leases up to `limit` due deliveries of enabled endpoints to this process. */
  private async claim(limit: number): Promise<Claimed[]> {
    const { db } = this.deps;
    const now = this.deps.now();
    const lease = randomBytes(12).toString('hex');
    const free = (q: Knex.QueryBuilder) => q.where((w) => w.whereNull('d.lease_until').orWhere('d.lease_until', '<', now));
    return db.transaction(async (trx) => {
      const candidates = free(
        trx('webhook_deliveries as d')
          .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
          .where('d.status', 'pending')
          .where('d.next_attempt_at', '<=', now)
          .where('e.enabled', true)
          .orderBy('d.next_attempt_at')
          .limit(limit)
          .select('d.id'),
      );
      const found: Array<{ id: unknown }> = isSqlite(trx) ? await candidates : await candidates.forUpdate('d').skipLocked();
      const ids = found.map((r) => Number(r.id));
      if (ids.length === 0) return [];
      // The lease is taken only where it is still free: on SQLite the write transaction is the one
      // writer, on PostgreSQL the rows are locked; either way no two claims hold one delivery.
      await trx('webhook_deliveries')
        .whereIn('id', ids)
        .where('status', 'pending')
        .where((w) => w.whereNull('lease_until').orWhere('lease_until', '<', now))
        .update({ lease_until: now + this.leaseMs, lease_owner: lease, attempts: trx.raw('attempts + 1') });
      const rows = await trx('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .whereIn('d.id', ids)
        .where('d.lease_owner', lease)
        .select('d.id', 'd.endpoint_id', 'd.message_id', 'd.payload', 'd.attempts', 'd.retry_until', 'e.url', 'e.secrets_sealed', 'e.previous_secret_expires_at');
      return rows.map((r) => ({
        id: Number(r.id),
        endpointId: Number(r.endpoint_id),
        messageId: String(r.message_id),
        payload: String(r.payload),
        attempt: Number(r.attempts),
        retryUntil: Number(r.retry_until),
        url: String(r.url),
        secretsSealed: String(r.secrets_sealed),
        previousExpiresAt: r.previous_secret_expires_at == null ? null : Number(r.previous_secret_expires_at),
        lease,
      }));
    });
  }

  private async attempt(c: Claimed): Promise<void> {
    const startedAt = this.deps.now();
    // The signature's timestamp is the wall clock of the attempt: receivers check it against theirs.
    const headers = signedHeaders(c.messageId, new Date(), c.payload, signingSecrets(this.deps.secrets, c.secretsSealed, c.previousExpiresAt, startedAt));
    const outcome = await this.sender.send(c.url, c.payload, headers);
    this.outcomes.push({ claimed: c, startedAt, outcome });
    if (this.outcomes.length >= RECORD_BATCH) void this.flush();
    else this.recordTimer ??= setTimeout(() => void this.flush(), RECORD_MS);
  }

  /** Writes the outcomes waiting, in one transaction; flushes run one after another. */
  private flush(): Promise<void> {
    if (this.recordTimer) clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    const batch = this.outcomes;
    this.outcomes = [];
    if (batch.length === 0) return this.recording;
    this.recording = this.recording.then(() =>
      this.record(batch).catch((err) => this.deps.logger.warn({ err, deliveries: batch.length }, 'webhook outcomes could not be recorded; their leases expire and they are tried again')),
    );
    return this.recording;
  }

  private async record(batch: Outcome[]): Promise<void> {
    const now = this.deps.now();
    await this.deps.db.transaction(async (trx) => {
      const rows = batch.map(({ claimed: c, startedAt, outcome }) => ({
        delivery_id: c.id,
        attempt: c.attempt,
        started_at: startedAt,
        duration_ms: outcome.durationMs,
        status_code: outcome.statusCode,
        response_body: outcome.responseBody,
        error: outcome.error?.slice(0, 300) ?? null,
        succeeded: outcome.succeeded,
      }));
      for (let i = 0; i < rows.length; i += 100) await trx('webhook_attempts').insert(rows.slice(i, i + 100));
      // Successes: one update per claim (a claim's rows share its lease), then the endpoints' runs of failures end.
      const succeeded = new Map<string, number[]>();
      for (const { claimed: c, outcome } of batch) if (outcome.succeeded) succeeded.set(c.lease, [...(succeeded.get(c.lease) ?? []), c.id]);
      for (const [lease, ids] of succeeded) {
        await trx('webhook_deliveries').whereIn('id', ids).where({ lease_owner: lease }).update({ status: 'succeeded', delivered_at: now, next_attempt_at: null, lease_until: null, lease_owner: null });
      }
      const healthy = [...new Set(batch.filter((o) => o.outcome.succeeded).map((o) => o.claimed.endpointId))];
      if (healthy.length > 0) await trx('webhook_endpoints').whereIn('id', healthy).whereNotNull('failing_since').update({ failing_since: null });
      // Failures: each its own next attempt.
      for (const { claimed: c, startedAt, outcome } of batch) {
        if (outcome.succeeded) continue;
        const next = nextAttemptAt(c.retryUntil, c.attempt, now);
        await trx('webhook_deliveries').where({ id: c.id, lease_owner: c.lease }).update({ status: next === null ? 'failed' : 'pending', next_attempt_at: next, lease_until: null, lease_owner: null });
        await trx('webhook_endpoints').where({ id: c.endpointId }).whereNull('failing_since').update({ failing_since: startedAt });
        await this.disableIfFailingTooLong(trx, c.endpointId, now);
      }
    });
  }

  /** An endpoint with no successful attempt for 3 days is switched off, and its owner told. */
  private async disableIfFailingTooLong(trx: Knex.Transaction, endpointId: number, now: number): Promise<void> {
    const endpoint = await trx('webhook_endpoints').where({ id: endpointId, enabled: true }).where('failing_since', '<=', now - WEBHOOK_LIMITS.disableAfterFailingMs).first('id', 'url', 'workspace_id', 'program_id', 'failing_since');
    if (!endpoint) return;
    await trx('webhook_endpoints').where({ id: endpointId }).update({ enabled: false, disabled_reason: 'failing', disabled_at: now, updated_at: now });
    await appendEvents(trx, [
      {
        type: 'webhook_endpoint.disabled',
        programId: endpoint.program_id == null ? null : Number(endpoint.program_id),
        workspaceId: Number(endpoint.workspace_id),
        data: { endpoint_id: endpointId, url: auditUrl(endpoint.url), failing_since: new Date(Number(endpoint.failing_since)).toISOString() },
        occurredAt: now,
        actor: { type: 'system', id: null, label: null, ip: null },
      },
    ]);
    // Its owners are told by e-mail too (when mail is configured; in development, the mailbox).
    await queueDisabledNotice(trx, this.deps.secrets, { id: endpointId, url: auditUrl(endpoint.url), workspaceId: Number(endpoint.workspace_id), failingSince: Number(endpoint.failing_since) }, this.deps.publicBaseUrl ?? '', now);
    this.deps.logger.warn({ endpoint: endpointId }, 'webhook endpoint disabled: every delivery failed for 3 days');
  }
}
