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
 * - **Retries** follow webhooks/schedule.ts for 3 days; an endpoint whose deliveries have all failed
 *   for 3 days is disabled, with a `webhook_endpoint.disabled` event (the audit log and the
 *   dashboard's notice).
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

export interface WebhookWorkerDeps {
  db: Knex;
  secrets: SecretBox;
  now: () => number;
  logger: Logger;
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  /** Attempts in flight at once in this process. */
  concurrency?: number;
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

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.timeoutMs = deps.timeoutMs ?? WEBHOOK_LIMITS.timeoutMs;
    this.concurrency = deps.concurrency ?? 16;
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
      await this.claiming;
      const claimed = await this.claim(this.concurrency);
      if (claimed.length === 0 && this.inFlight.size === 0) return;
      for (const c of claimed) this.track(c);
      await Promise.all([...this.inFlight]);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    await this.claiming;
    await Promise.all([...this.inFlight]);
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
        this.poke();
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
    await this.record(c, startedAt, outcome);
  }

  private async record(c: Claimed, startedAt: number, outcome: AttemptOutcome): Promise<void> {
    const now = this.deps.now();
    await this.deps.db.transaction(async (trx) => {
      await trx('webhook_attempts').insert({
        delivery_id: c.id,
        attempt: c.attempt,
        started_at: startedAt,
        duration_ms: outcome.durationMs,
        status_code: outcome.statusCode,
        response_body: outcome.responseBody,
        error: outcome.error?.slice(0, 300) ?? null,
        succeeded: outcome.succeeded,
      });
      const mine = trx('webhook_deliveries').where({ id: c.id, lease_owner: c.lease });
      if (outcome.succeeded) {
        await mine.update({ status: 'succeeded', delivered_at: now, next_attempt_at: null, lease_until: null, lease_owner: null });
        await trx('webhook_endpoints').where({ id: c.endpointId }).whereNotNull('failing_since').update({ failing_since: null });
        return;
      }
      const next = nextAttemptAt(c.retryUntil, c.attempt, now);
      await mine.update({ status: next === null ? 'failed' : 'pending', next_attempt_at: next, lease_until: null, lease_owner: null });
      await trx('webhook_endpoints').where({ id: c.endpointId }).whereNull('failing_since').update({ failing_since: startedAt });
      await this.disableIfFailingTooLong(trx, c.endpointId, now);
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
    this.deps.logger.warn({ endpoint: endpointId }, 'webhook endpoint disabled: every delivery failed for 3 days');
  }
}
