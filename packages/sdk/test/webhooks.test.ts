/**
 * `reftrack.webhooks.constructEvent` (docs/webhooks.md, "Verifying a delivery"): deliveries signed
 * by the Standard Webhooks reference implementation (`standardwebhooks`, the library the server
 * signs with) verify and come back typed; anything altered, stale or unsigned throws
 * WebhookVerificationError with its code.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Reftrack, WebhookVerificationError, constructWebhookEvent } from '../src/index.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const other = `whsec_${randomBytes(32).toString('base64')}`;
const event = {
  id: 'evt_VcFkTsifUG3yVUKGyhGR5oYd',
  type: 'sale.created',
  version: 1,
  timestamp: '2026-11-28T08:04:33.716Z',
  program_id: 1,
  data: { sale: { id: 10, program_id: 1, transaction_id: 'in_1', amount_cents: 10000, currency: 'USD', click_id: null, customer_key: 'c1', partner_id: 1, is_recurring: false, sale_type: null, subscription_id: null, provider: null, occurred_at: '2026-11-28T08:04:33.716Z', created_at: '2026-11-28T08:04:33.716Z' } },
};
const body = JSON.stringify(event);

function signed(at = new Date(), secrets = [secret], id = event.id, payload = body): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, payload)).join(' '),
  };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return (err as WebhookVerificationError).code;
  }
  throw new Error('did not throw');
}

const reftrack = new Reftrack({ apiKey: 'aff_0123456789abcdefghijABCDEFGHIJ01' });

describe('webhooks.constructEvent: a genuine delivery', () => {
  it('returns the typed event for the raw body as a string or as bytes, with Node or Fetch headers', () => {
    const headers = signed();
    const e = reftrack.webhooks.constructEvent(body, headers, secret);
    expect(e).toEqual(event);
    if (e.type === 'sale.created') expect(e.data.sale.amount_cents).toBe(10000);
    expect(constructWebhookEvent(Buffer.from(body), new Headers(headers), secret)).toEqual(event);
  });

  it('during a rotation the header carries two signatures: either secret verifies', () => {
    const headers = signed(new Date(), [secret, other]);
    expect(constructWebhookEvent(body, headers, secret).id).toBe(event.id);
    expect(constructWebhookEvent(body, headers, other).id).toBe(event.id);
  });

  it('tolerates clock skew up to toleranceSeconds either way (5 minutes by default)', () => {
    const now = new Date('2026-11-28T12:00:00Z');
    expect(constructWebhookEvent(body, signed(new Date(now.getTime() - 290_000)), secret, { now }).id).toBe(event.id);
    expect(constructWebhookEvent(body, signed(new Date(now.getTime() + 290_000)), secret, { now }).id).toBe(event.id);
    expect(constructWebhookEvent(body, signed(new Date(now.getTime() - 600_000)), secret, { now, toleranceSeconds: 900 }).id).toBe(event.id);
  });
});

describe('webhooks.constructEvent: refusals', () => {
  it('a changed body, another secret or a changed id: invalid_signature', () => {
    expect(codeOf(() => constructWebhookEvent(body.replace('10000', '1'), signed(), secret))).toBe('invalid_signature');
    expect(codeOf(() => constructWebhookEvent(body, signed(), other))).toBe('invalid_signature');
    expect(codeOf(() => constructWebhookEvent(body, { ...signed(), 'webhook-id': 'evt_other' }, secret))).toBe('invalid_signature');
  });

  it('a stale or future timestamp: timestamp_too_old, timestamp_too_new; a malformed one: invalid_timestamp', () => {
    const now = new Date('2026-11-28T12:00:00Z');
    expect(codeOf(() => constructWebhookEvent(body, signed(new Date(now.getTime() - 301_000)), secret, { now }))).toBe('timestamp_too_old');
    expect(codeOf(() => constructWebhookEvent(body, signed(new Date(now.getTime() + 301_000)), secret, { now }))).toBe('timestamp_too_new');
    expect(codeOf(() => constructWebhookEvent(body, { ...signed(), 'webhook-timestamp': 'soon' }, secret))).toBe('invalid_timestamp');
  });

  it('missing headers: missing_headers; a signed body that is not an event: invalid_payload', () => {
    const { 'webhook-signature': _dropped, ...unsigned } = signed();
    expect(codeOf(() => constructWebhookEvent(body, unsigned, secret))).toBe('missing_headers');
    const notJson = 'hello';
    expect(codeOf(() => constructWebhookEvent(notJson, signed(new Date(), [secret], event.id, notJson), secret))).toBe('invalid_payload');
  });
});
