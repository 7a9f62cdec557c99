/**
 * Outbound webhooks (docs/webhooks.md): the events an endpoint can subscribe to, the envelope each
 * delivery carries, the Standard Webhooks headers, and the shapes of the endpoint and delivery-log
 * routes (dashboard and agent API).
 *
 * A webhook event is a domain event (events.ts) as delivered: its payload and version are the
 * domain event's, so a type is offered to webhooks by adding it to WEBHOOK_EVENT_TYPES — one line
 */
import type { DomainEventType, EventPayloads } from './events.js';
import { DOMAIN_EVENT_VERSIONS } from './events.js';

/** The domain event types an endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'lead.created',
  'lead.settled',
  'sale.created',
  'sale.refunded',
  'commission.created',
  'commission.updated',
  'payout.created',
  'payout.updated',
  'partner.enrolled',
  'link.created',
  'link.updated',
] as const satisfies readonly DomainEventType[];
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * What an endpoint owned for a partner (a postback) can receive: that partner's own leads, sales
 * and commissions, never a customer's key or e-mail address.
 */
export const PARTNER_WEBHOOK_EVENT_TYPES = ['lead.created', 'sale.created', 'commission.created', 'commission.updated'] as const satisfies readonly WebhookEventType[];
export type PartnerWebhookEventType = (typeof PARTNER_WEBHOOK_EVENT_TYPES)[number];

/** "Send test event": a delivery that no domain event caused, to check a receiver. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook.test';
export interface WebhookTestPayload {
  endpoint_id: number;
  message: string;
}

/** The payload of every type a delivery can carry. */
export type WebhookPayloads = { [T in WebhookEventType]: EventPayloads[T] } & { 'webhook.test': WebhookTestPayload };
export type DeliveredEventType = keyof WebhookPayloads;

/** Payload versions: the domain event's (test events are version 1). */
export const WEBHOOK_EVENT_VERSIONS: { readonly [T in DeliveredEventType]: number } = {
  ...(Object.fromEntries(WEBHOOK_EVENT_TYPES.map((t) => [t, DOMAIN_EVENT_VERSIONS[t]])) as { [T in WebhookEventType]: number }),
  'webhook.test': 1,
};

/**
 * The JSON body of a delivery (the Standard Webhooks payload shape: `type`, `timestamp`, `data`,
 * with the event's id, version and program). `id` is also the `webhook-id` header: the same on
 * every retry of the delivery, so a receiver deduplicates on it.
 */
export interface WebhookEvent<T extends DeliveredEventType = DeliveredEventType> {
  id: string;
  type: T;
  version: number;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  program_id: number | null;
  data: WebhookPayloads[T];
}

/** Any delivered event, narrowed by `type`. */
export type AnyWebhookEvent = { [T in DeliveredEventType]: WebhookEvent<T> }[DeliveredEventType];

/** The headers of every delivery (Standard Webhooks). */
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** Timings and sizes of delivery (docs/webhooks.md, "Retries"). */
export const WEBHOOK_LIMITS = {
  /** Attempts are retried until this long after the event; then the delivery has failed. */
  retryForMs: 3 * 24 * 3600 * 1000,
  /** An endpoint whose deliveries have all failed for this long is disabled. */
  disableAfterFailingMs: 3 * 24 * 3600 * 1000,
  /** The first retry's delay; each later one doubles, up to `retryMaxDelayMs`, ±20% jitter. */
  retryBaseDelayMs: 5_000,
  retryMaxDelayMs: 6 * 3600 * 1000,
  /** The whole attempt: connect, send, answer. */
  timeoutMs: 10_000,
  /** A response body is read up to this many bytes, then the connection is closed. */
  maxResponseBytes: 64 * 1024,
  /** The start of the response body kept in the delivery log. */
  loggedResponseBytes: 1024,
  /** A rotated-out secret keeps signing alongside the new one this long. */
  previousSecretMs: 24 * 3600 * 1000,
  /** The SDK's default tolerance of a delivery's timestamp against the receiver's clock. */
  toleranceSeconds: 5 * 60,
  urlMaxLength: 2048,
  endpointsPerWorkspace: 50,
  descriptionMaxLength: 200,
} as const;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** An endpoint as the dashboard and agent API show it: never its secret. */
export interface WebhookEndpoint {
  id: number;
  workspace_id: number;
  url: string;
  description: string | null;
  event_types: DeliveredEventType[];
  /** Only events of this program; null: every program of the workspace. */
  program_id: number | null;
  /** Set: a partner's postback endpoint, receiving that partner's events only. */
  partner_id: number | null;
  enabled: boolean;
  /** Why it is off when Reftrack switched it off (`failing`: every delivery failed for 3 days). */
  disabled_reason: 'failing' | null;
  disabled_at: string | null;
  /** First failure of the current run of failures; null when the last attempt succeeded. */
  failing_since: string | null;
  /** While set, the previous secret still signs alongside the current one. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Creating an endpoint or rotating its secret: the only answers that carry the secret. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

/** One attempt of a delivery, as the delivery log shows it. */
export interface WebhookAttempt {
  attempt: number;
  started_at: string;
  duration_ms: number | null;
  status_code: number | null;
  /** The first KiB of the response body (as text). */
  response_body: string | null;
  /** Why the attempt failed without an HTTP answer (refused target, timeout, connection). */
  error: string | null;
  succeeded: boolean;
}

/** A delivery: one event to one endpoint, tried until it succeeds or 3 days pass. */
export interface WebhookDelivery {
  id: number;
  endpoint_id: number;
  /** The `webhook-id`: the event's id (a test event's own). */
  message_id: string;
  event_type: DeliveredEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
  /** The last attempt's outcome (the log's columns), null before the first. */
  last_attempt: WebhookAttempt | null;
}

/** GET …/webhook-deliveries/:id: a delivery with every attempt, oldest first, and the body sent. */
export interface WebhookDeliveryDetail extends WebhookDelivery {
  payload: AnyWebhookEvent;
  attempt_log: WebhookAttempt[];
}

/** GET …/webhooks/:id/deliveries: a page of deliveries, newest first. */
export interface WebhookDeliveriesResponse {
  success: true;
  data: WebhookDelivery[];
  meta: { pagination: { page: number; pageSize: number; pageCount: number; total: number } };
}

/** The test event's text ("Send test event"). */
export const WEBHOOK_TEST_MESSAGE = 'A test event from Reftrack: your endpoint received it and can verify its signature.';

/** Why an attempt failed without an HTTP answer, as the delivery log shows it (`{name}` filled in). */
export const WEBHOOK_ATTEMPT_ERRORS = {
  forbiddenTarget: 'Refused: {address} is a private, loopback, link-local or metadata address (the operator can allow private targets with WEBHOOKS_ALLOW_PRIVATE_TARGETS)',
  timeout: 'No complete answer within {ms} ms',
  invalidUrl: 'The endpoint URL is not a valid URL',
  connection: 'Connection failed: {code} {reason}',
  redirect: 'Answered with a redirect ({status}); redirects are not followed: set the endpoint URL to the final address',
} as const;
