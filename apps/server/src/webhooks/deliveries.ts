/**
 * Delivery rows (docs/webhooks.md, "Delivery"): queued by the outbox consumer in the cursor's
 * transaction, by "resend" and by "send test event"; performed by the delivery worker
 * (jobs/webhook-worker.ts); listed as each endpoint's delivery log.
 */
import type { Knex } from 'knex';
import { ERRORS, WEBHOOK_LIMITS, type AnyWebhookEvent, type DeliveredEventType, type WebhookAttempt, type WebhookDelivery, type WebhookDeliveryDetail } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { insertId } from '../db/insert-id.js';
import { newEventId } from '../domain/ids.js';
import { testBody } from './payloads.js';
import { deliveriesQueued } from './wakeup.js';

const iso = (ms: unknown): string | null => (ms == null ? null : new Date(Number(ms)).toISOString());

/** A new delivery row, due now. */
export function deliveryRow(endpointId: number, messageId: string, eventType: string, payload: string, now: number): Record<string, unknown> {
  return { endpoint_id: endpointId, message_id: messageId, event_type: eventType, payload, status: 'pending', attempts: 0, next_attempt_at: now, retry_until: now + WEBHOOK_LIMITS.retryForMs, created_at: now };
}

const DELIVERY_COLUMNS = ['id', 'endpoint_id', 'message_id', 'event_type', 'status', 'attempts', 'next_attempt_at', 'created_at', 'delivered_at'];

function attemptView(row: Record<string, unknown>): WebhookAttempt {
  return {
    attempt: Number(row.attempt),
    started_at: iso(row.started_at)!,
    duration_ms: row.duration_ms == null ? null : Number(row.duration_ms),
    status_code: row.status_code == null ? null : Number(row.status_code),
    response_body: (row.response_body as string | null) ?? null,
    error: (row.error as string | null) ?? null,
    succeeded: Boolean(row.succeeded),
  };
}

function deliveryView(row: Record<string, unknown>, last: WebhookAttempt | null): WebhookDelivery {
  return {
    id: Number(row.id),
    endpoint_id: Number(row.endpoint_id),
    message_id: String(row.message_id),
    event_type: row.event_type as DeliveredEventType,
    status: row.status as WebhookDelivery['status'],
    attempts: Number(row.attempts),
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    created_at: iso(row.created_at)!,
    delivered_at: iso(row.delivered_at),
    last_attempt: last,
  };
}

/** One endpoint's deliveries, newest first, each with its last attempt. */
export async function listDeliveries(db: Knex, endpointId: number, page: number, pageSize: number): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
  const total = Number((await db('webhook_deliveries').where({ endpoint_id: endpointId }).count({ n: '*' }).first())?.n ?? 0);
  const rows = await db('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('id', 'desc').limit(pageSize).offset((page - 1) * pageSize).select(DELIVERY_COLUMNS);
  const ids = rows.map((r) => Number(r.id));
  const last = new Map<number, WebhookAttempt>();
  if (ids.length > 0) {
    const attempts = await db('webhook_attempts').whereIn('delivery_id', ids).orderBy('id').select();
    for (const a of attempts) last.set(Number(a.delivery_id), attemptView(a));
  }
  return { deliveries: rows.map((r) => deliveryView(r, last.get(Number(r.id)) ?? null)), total };
}

/** The delivery's endpoint's workspace (for the caller's permission check), or undefined. */
export async function deliveryWorkspace(db: Knex, id: number): Promise<number | undefined> {
  const row = await db('webhook_deliveries as d').join('webhook_endpoints as e', 'e.id', 'd.endpoint_id').where('d.id', id).first('e.workspace_id');
  return row ? Number(row.workspace_id) : undefined;
}

export async function readDelivery(db: Knex, id: number): Promise<WebhookDeliveryDetail> {
  const row = await db('webhook_deliveries').where({ id }).first([...DELIVERY_COLUMNS, 'payload']);
  if (!row) fail(ERRORS.webhookDeliveryNotFound);
  const log = (await db('webhook_attempts').where({ delivery_id: id }).orderBy('id').select()).map(attemptView);
  return { ...deliveryView(row, log[log.length - 1] ?? null), payload: JSON.parse(row.payload) as AnyWebhookEvent, attempt_log: log };
}

/**
 * Sends the delivery again, now, with the same `webhook-id` and body (a receiver that already
 * has it deduplicates): a failed or delivered one is queued again, with 3 more days of retries.
 */
export async function resendDelivery(db: Knex, id: number, now: number): Promise<WebhookDeliveryDetail> {
  const changed = await db('webhook_deliveries').where({ id }).update({ status: 'pending', next_attempt_at: now, retry_until: now + WEBHOOK_LIMITS.retryForMs, lease_until: null, lease_owner: null });
  if (changed === 0) fail(ERRORS.webhookDeliveryNotFound);
  deliveriesQueued();
  return readDelivery(db, id);
}

/** Queues a `webhook.test` delivery to the endpoint. */
export async function queueTestEvent(db: Knex, endpointId: number, now: number): Promise<WebhookDeliveryDetail> {
  const messageId = newEventId(now);
  const id = await insertId(db, 'webhook_deliveries', deliveryRow(endpointId, messageId, 'webhook.test', testBody(messageId, endpointId, now), now));
  deliveriesQueued();
  return readDelivery(db, id);
}
