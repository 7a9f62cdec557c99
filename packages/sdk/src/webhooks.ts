/**
 * Verifying Reftrack's outbound webhooks (docs/webhooks.md): `constructWebhookEvent(rawBody,
 * headers, secret)` checks the Standard Webhooks signature and timestamp and returns the typed
 * event, or throws `WebhookVerificationError` with a `code` saying why. The signature is computed
 * by `standardwebhooks` (the specification's maintained implementation); this module adds a
 * configurable clock-skew tolerance and typed errors.
 */
import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_HEADERS, WEBHOOK_LIMITS, type AnyWebhookEvent } from '@reftrack/contract';

export type WebhookVerificationErrorCode = 'missing_headers' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'invalid_signature' | 'invalid_payload';

const MESSAGES: Record<WebhookVerificationErrorCode, string> = {
  missing_headers: 'The webhook-id, webhook-timestamp and webhook-signature headers are required.',
  invalid_timestamp: 'The webhook-timestamp header is not a number of seconds.',
  timestamp_too_old: 'The webhook-timestamp is older than the tolerance allows: a replay, or the clocks differ.',
  timestamp_too_new: 'The webhook-timestamp is further in the future than the tolerance allows: the clocks differ.',
  invalid_signature: 'No signature matches: the body was changed, or the secret is not this endpoint’s.',
  invalid_payload: 'The body is not a Reftrack webhook event (JSON with id and type).',
};

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(readonly code: WebhookVerificationErrorCode) {
    super(MESSAGES[code]);
  }
}

/** Headers as Node (`req.headers`), the Fetch API (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface ConstructEventOptions {
  /** How far the timestamp may be from this clock, either way (default 300 seconds). */
  toleranceSeconds?: number;
  /** This clock (tests). */
  now?: Date;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

function bodyText(rawBody: string | Uint8Array): string {
  return typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString('utf8');
}

/** The verified event of a delivery; pass the body exactly as received (before any JSON parsing). */
export function constructWebhookEvent(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: ConstructEventOptions = {}): AnyWebhookEvent {
  const id = header(headers, WEBHOOK_HEADERS.id);
  const timestamp = header(headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(headers, WEBHOOK_HEADERS.signature);
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing_headers');
  if (!/^\d{1,12}$/.test(timestamp.trim())) throw new WebhookVerificationError('invalid_timestamp');
  const seconds = Number(timestamp.trim());
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_LIMITS.toleranceSeconds;
  if (now - seconds > tolerance) throw new WebhookVerificationError('timestamp_too_old');
  if (seconds - now > tolerance) throw new WebhookVerificationError('timestamp_too_new');
  const body = bodyText(rawBody);
  const expected = Buffer.from(new Webhook(secret).sign(id, new Date(seconds * 1000), body).split(',')[1]);
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('invalid_signature');
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('invalid_payload');
  }
  const e = event as Partial<AnyWebhookEvent> | null;
  if (!e || typeof e !== 'object' || typeof e.id !== 'string' || typeof e.type !== 'string' || e.id !== id) throw new WebhookVerificationError('invalid_payload');
  return event as AnyWebhookEvent;
}

/** `reftrack.webhooks`: the same function on a client. */
export interface WebhooksHelper {
  constructEvent: typeof constructWebhookEvent;
}
