/**
 * 6.1 payment-processor intake over real HTTP, on SQLite and PostgreSQL: each connection's own
 * address POST /api/v1/webhooks/stripe/whe_… (most deliveries here) and the shared
 * POST /api/v1/webhooks/stripe. Events are built from Stripe's own sample objects
 * (test/fixtures/stripe, copied from the shared fixtures) and signed with the stripe library's
 * test-header helper.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, LIMITS } from '@reftrack/contract';
import { bearer, dbKind, KEY1, LEGACY_KEY, startTestServer, type TestResponse, type TestServer } from './helpers/index.js';
import { click, sale } from './helpers/flows.js';
import { signInAs } from './helpers/accounts.js';
import { createProgram } from '../src/db/programs.js';

const HOOK = '/api/v1/webhooks/stripe';
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'stripe');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Stripe objects are free-form JSON here
type Json = Record<string, any>;
const fixture = (name: string): Json => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8')) as Json;

/** Program 1 (percent 20, server_required) and 3 (recurring_fixed 5) are connected accounts; 2 uses its own endpoint. */
const ACCT1 = 'acct_1AcmeTest';
const SECRET1 = 'whsec_acmeSigningSecret1';
const ACCT2 = 'acct_2OpenTest';
const SECRET2 = 'whsec_openSigningSecret2';
const ACCT3 = 'acct_3LegacyTest';
const SECRET3 = 'whsec_legacySigningSecret3';

let s: TestServer;
let owner: Record<string, string>;
/** Each connection's own address, by the secret the tests sign with. */
const address = new Map<string, string>();

const payments = (method: 'PUT' | 'DELETE', programId: number, body?: unknown) =>
  s.raw(`/api/dashboard/programs/${programId}/payments`, { method, headers: { 'content-type': 'application/json', ...owner }, body: body === undefined ? undefined : JSON.stringify(body) });

/** Connects a program in the dashboard (Payments) and returns the path of its own intake address. */
async function connect(programId: number, account: string, secret: string): Promise<string> {
  const res = await payments('PUT', programId, { stripe_account_id: account, webhook_secret: secret });
  expect(res.status, res.text).toBe(200);
  const path = new URL(res.body.data.intake_url).pathname;
  address.set(secret, path);
  return path;
}

beforeAll(async () => {
  s = await startTestServer();
  owner = await signInAs(s, 'owner@acme.test');
  await connect(1, ACCT1, SECRET1);
  await connect(2, ACCT2, SECRET2);
  await connect(3, ACCT3, SECRET3);
});
afterAll(() => s?.close());

let n = 0;
const uid = (prefix: string): string => `${prefix}_${dbKind}${Date.now().toString(36)}${++n}`;

/** Wraps a Stripe object in Stripe's own event sample. `account` is set for connected-account events. */
function event(type: string, object: Json, account?: string): Json {
  const e = fixture('event.json');
  e.id = uid('evt');
  e.type = type;
  e.created = Math.floor(Date.now() / 1000);
  e.api_version = '2025-03-31.basil';
  e.data = { object };
  if (account) e.account = account;
  return e;
}

function signed(payload: string, secret: string, timestamp?: number): Record<string, string> {
  return { 'content-type': 'application/json', 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) };
}

/** Delivers to the own address of the connection whose secret signs (or to `to`). */
async function deliver(e: Json, secret = SECRET1, to = address.get(secret) ?? HOOK): Promise<TestResponse> {
  const payload = JSON.stringify(e);
  return s.raw(to, { method: 'POST', headers: signed(payload, secret), body: payload });
}

async function ok(e: Json, secret = SECRET1, to?: string): Promise<Json> {
  const res = await deliver(e, secret, to);
  expect(res.status, res.text).toBe(200);
  expect(res.body.success).toBe(true);
  expect(res.body.data).toMatchObject({ event_id: e.id, type: e.type });
  return res.body.data as Json;
}

const refusal = (status: number, message: string) => ({ data: null, error: { status, name: status === 404 ? 'NotFoundError' : status === 413 ? 'PayloadTooLargeError' : 'BadRequestError', message, details: {} } });

interface CheckoutOptions {
  metadata?: Record<string, string>;
  email?: string | null;
  customer?: string | null;
  amount?: number;
  paymentIntent?: string | null;
  mode?: 'payment' | 'subscription';
  paymentStatus?: string;
  currency?: string;
}
function checkoutSession(o: CheckoutOptions = {}): Json {
  const cs = fixture('checkout_session.json');
  cs.id = uid('cs_test');
  cs.status = 'complete';
  cs.mode = o.mode ?? 'payment';
  cs.payment_status = o.paymentStatus ?? 'paid';
  cs.amount_total = o.amount ?? 10_000;
  cs.amount_subtotal = cs.amount_total;
  cs.currency = o.currency ?? 'usd';
  cs.payment_intent = o.paymentIntent === undefined ? (cs.mode === 'payment' ? uid('pi') : null) : o.paymentIntent;
  cs.subscription = cs.mode === 'subscription' ? uid('sub') : null;
  cs.customer = o.customer === undefined ? null : o.customer;
  cs.customer_details.email = o.email === undefined ? null : o.email;
  cs.metadata = o.metadata ?? {};
  return cs;
}

interface InvoiceOptions {
  shape: 'parent' | 'legacy';
  metadata?: Record<string, string>;
  amountPaid?: number;
  billingReason?: string;
  customer?: string;
  email?: string | null;
  paymentIntent?: string;
}

/** Both Stripe shapes: subscription details under `parent` (2025-03-31+) or at the top level (before). */
function invoice(o: InvoiceOptions): Json {
  const inv = fixture(o.shape === 'parent' ? 'invoice_2025_03_31_parent.json' : 'invoice_legacy_pre_2025_03_31.json');
  inv.id = uid('in');
  inv.status = 'paid';
  inv.amount_paid = o.amountPaid ?? 2_000;
  inv.amount_due = inv.amount_paid;
  inv.amount_remaining = 0;
  inv.billing_reason = o.billingReason ?? 'subscription_cycle';
  inv.customer = o.customer ?? uid('cus');
  inv.customer_email = o.email ?? null;
  const subscription = uid('sub');
  if (o.shape === 'parent') {
    inv.parent = { quote_details: null, subscription_details: { metadata: o.metadata ?? {}, subscription }, type: 'subscription_details' };
  } else {
    inv.subscription_details = { metadata: o.metadata ?? {} };
    inv.subscription = subscription;
    if (o.paymentIntent) inv.payment_intent = o.paymentIntent;
  }
  return inv;
}

function charge(o: { paymentIntent?: string | null; amount: number; refunded: number; refundId?: string; invoice?: string }): Json {
  const ch = fixture('charge.json');
  ch.id = uid('ch');
  ch.amount = o.amount;
  ch.amount_captured = o.amount;
  ch.captured = true;
  ch.amount_refunded = o.refunded;
  ch.refunded = o.refunded >= o.amount;
  ch.payment_intent = o.paymentIntent ?? null;
  if (o.invoice) ch.invoice = o.invoice; // legacy API versions only
  if (o.refundId) {
    const re = fixture('refund.json');
    re.id = o.refundId;
    re.charge = ch.id;
    re.payment_intent = ch.payment_intent;
    re.amount = o.refunded;
    re.reason = 'requested_by_customer';
    ch.refunds = { object: 'list', data: [re], has_more: false, url: `/v1/charges/${ch.id}/refunds` };
  } else {
    delete ch.refunds; // not included by default since API 2022-11-15
  }
  return ch;
}

async function provisionalLead(aff = 'pat20'): Promise<string> {
  const clickId = await click(s, aff);
  const res = await s.post('/api/v1/track/lead', { click_id: clickId, customer_key: 'ignored-in-browser-mode' });
  expect(res.body.provisional).toBe(true);
  return clickId;
}

async function serverLead(clickId: string, body: Record<string, unknown>, key = KEY1): Promise<void> {
  const res = await s.post('/api/v1/track/lead', { click_id: clickId, ...body }, bearer(key));
  expect(res.status, res.text).toBe(200);
}

const customerOf = (clickId: string) => s.db('customers').where({ click_id: clickId }).first();
const salesOf = (transactionId: string) => s.db('sale_events').where({ processor_event_id: transactionId });
const count = async (table: string): Promise<number> => Number((await s.db(table).count({ n: '*' }).first())!.n);

describe(`[${dbKind}] 6.1 signature`, () => {
  it('a missing Stripe-Signature header answers 400 and stores nothing', async () => {
    const e = event('checkout.session.completed', checkoutSession());
    const before = await count('processor_events');
    for (const to of [address.get(SECRET1)!, HOOK]) {
      const res = await s.post(to, e);
      expect(res.status).toBe(400);
      expect(res.body).toEqual(refusal(400, 'Missing Stripe-Signature header'));
    }
    expect(await count('processor_events')).toBe(before);
  });

  it('a bad signature (unknown secret, tampered body, stale timestamp) answers 400 and stores nothing', async () => {
    const clickId = await click(s);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId } });
    const e = event('checkout.session.completed', cs, ACCT1);
    const payload = JSON.stringify(e);
    const before = { events: await count('processor_events'), sales: await count('sale_events') };
    const attempts = [
      { headers: signed(payload, 'whsec_notTheProgramsSecret'), body: payload },
      { headers: signed(payload, SECRET1), body: payload.replace('"amount_total":10000', '"amount_total":99999999') },
      { headers: signed(payload, SECRET1, Math.floor(Date.now() / 1000) - 3600), body: payload },
      { headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=deadbeef' }, body: payload },
    ];
    for (const to of [address.get(SECRET1)!, HOOK]) {
      for (const init of attempts) {
        const res = await s.raw(to, { method: 'POST', ...init });
        expect(res.status, res.text).toBe(400);
        expect(res.body).toEqual(refusal(400, ERRORS.stripeSignatureInvalid.message));
      }
    }
    expect(await count('processor_events')).toBe(before.events);
    expect(await count('sale_events')).toBe(before.sales);
    expect((await customerOf(clickId)).converted_at).toBeNull();
  });

  it('while a secret is rolled Stripe signs with the old and the new one: a header whose second v1 matches verifies', async () => {
    const e = event('plan.created', fixture('event.json').data.object, ACCT1);
    const payload = JSON.stringify(e);
    const timestamp = Math.floor(Date.now() / 1000);
    const v1 = (secret: string) => /v1=([0-9a-f]{64})/.exec(Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }))![1];
    const header = `t=${timestamp},v1=${v1('whsec_theOldRolledSecret')},v0=ignored,v1=${v1(SECRET1)}`;
    const res = await s.raw(address.get(SECRET1)!, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': header }, body: payload });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ event_id: e.id, program_id: 1 });
  });

  it('a signed body that is not a JSON object answers 400 and stores nothing', async () => {
    const before = await count('processor_events');
    for (const payload of ['{"id": "evt_', '[1,2]']) {
      const res = await s.raw(address.get(SECRET1)!, { method: 'POST', headers: signed(payload, SECRET1), body: payload });
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual(refusal(400, ERRORS.stripeEventInvalid.message));
    }
    expect(await count('processor_events')).toBe(before);
  });
});

describe(`[${dbKind}] intake addresses: one per connection`, () => {
  it('an address checks only its own connection’s secret', async () => {
    const e = event('plan.created', fixture('event.json').data.object);
    // Program 2's secret is a real one, but not the secret of program 1's address.
    const refused = await deliver(e, SECRET2, address.get(SECRET1));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal(400, ERRORS.stripeSignatureInvalid.message));
    expect(await ok(e, SECRET2)).toMatchObject({ program_id: 2 });
  });

  it('an unknown address answers 404 in the envelope, even to an event a connection’s secret signs', async () => {
    const e = event('plan.created', fixture('event.json').data.object, ACCT1);
    for (const to of [`${HOOK}/whe_${'x'.repeat(32)}`, `${HOOK}/whe_`, `${HOOK}/${'a'.repeat(300)}`, `${HOOK}/acct_1AcmeTest`]) {
      const res = await deliver(e, SECRET1, to);
      expect(res.status, to).toBe(404);
      expect(res.body).toEqual(refusal(404, ERRORS.stripeEndpointNotFound.message));
    }
    expect(await s.db('processor_events').where({ event_id: e.id })).toHaveLength(0);
  });

  it('the address is an unguessable whe_ id, kept when the secret or account changes; disconnecting retires it', async () => {
    const first = address.get(SECRET2)!;
    expect(first).toMatch(new RegExp(`^${HOOK}/whe_[0-9A-Za-z]{${LIMITS.webhookEndpointIdRandomLength}}$`));
    expect(await connect(2, ACCT2, 'whsec_rolledSecret2')).toBe(first);
    expect((await deliver(event('plan.created', fixture('event.json').data.object), SECRET2, first)).status).toBe(400);
    expect(await ok(event('plan.created', fixture('event.json').data.object), 'whsec_rolledSecret2')).toMatchObject({ program_id: 2 });

    expect((await payments('DELETE', 2)).body.data).toMatchObject({ connected: false, intake_url: null });
    const retired = await deliver(event('plan.created', fixture('event.json').data.object), 'whsec_rolledSecret2', first);
    expect(retired.status).toBe(404);
    const fresh = await connect(2, ACCT2, SECRET2);
    expect(fresh).not.toBe(first);
    expect((await deliver(event('plan.created', fixture('event.json').data.object), SECRET2, first)).status).toBe(404);
    expect(await ok(event('plan.created', fixture('event.json').data.object), SECRET2, fresh)).toMatchObject({ program_id: 2 });
  });

  it('an event of another connected account reaching the address is ignored (200 other_account), nothing recorded', async () => {
    const clickId = await click(s);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId } });
    const data = await ok(event('checkout.session.completed', cs, 'acct_someOtherAccount'));
    expect(data).toMatchObject({ action: 'ignored', reason: 'other_account', program_id: 1 });
    expect(await salesOf(cs.payment_intent)).toHaveLength(0);
  });
});

describe(`[${dbKind}] the shared address checks at most one secret`, () => {
  it('an event with `account` is checked against the one connection of that account', async () => {
    expect(await ok(event('plan.created', fixture('event.json').data.object, ACCT2), SECRET2, HOOK)).toMatchObject({ program_id: 2 });
    // Signed with program 2's secret but claiming program 1's account: only program 1's secret is checked.
    const refused = await deliver(event('plan.created', fixture('event.json').data.object, ACCT1), SECRET2, HOOK);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal(400, ERRORS.stripeSignatureInvalid.message));
  });

  it('an event without `account` is checked against the program its metadata.program_id names', async () => {
    const clickId = await click(s, 'p3');
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId, program_id: '3' } });
    // Program 1's secret does not count for an event that names program 3.
    const refused = await deliver(event('checkout.session.completed', cs), SECRET1, HOOK);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(refusal(400, ERRORS.stripeSignatureInvalid.message));
    expect(await ok(event('checkout.session.completed', cs), SECRET3, HOOK)).toMatchObject({ action: 'recorded', program_id: 3, transaction_id: cs.payment_intent });
  });

  it('an event that names no connection is refused with 400 before any signature is checked', async () => {
    const before = await count('processor_events');
    const unnamed = [
      event('charge.refunded', charge({ paymentIntent: uid('pi'), amount: 500, refunded: 500 })), // no account, no metadata
      event('plan.created', fixture('event.json').data.object, 'acct_notConnectedAnywhere'),
      event('checkout.session.completed', checkoutSession({ metadata: { program_id: '999999' } })),
    ];
    for (const e of unnamed) {
      // Signed with a real connection's secret: a server that tried it would accept the event.
      const res = await deliver(e, SECRET1, HOOK);
      expect(res.status, res.text).toBe(400);
      expect(res.body).toEqual(refusal(400, ERRORS.stripeEventUnrouted.message));
    }
    expect(await count('processor_events')).toBe(before);
  });

  it('an account several programs are connected to: the one metadata.program_id names, else 400', async () => {
    const shared = 'acct_sharedByTwo';
    const a = await createProgram(s.db, 1, { name: 'Shared A', domain: 'a.test', commission_type: 'percent', commission_rate: 10 }, Date.now());
    const b = await createProgram(s.db, 1, { name: 'Shared B', domain: 'b.test', commission_type: 'percent', commission_rate: 10 }, Date.now());
    await connect(a.id, shared, 'whsec_sharedA');
    await connect(b.id, shared, 'whsec_sharedB');
    const named = event('checkout.session.completed', checkoutSession({ metadata: { program_id: String(b.id) } }), shared);
    expect(await ok(named, 'whsec_sharedB', HOOK)).toMatchObject({ program_id: b.id });
    const refund = event('charge.refunded', charge({ paymentIntent: uid('pi'), amount: 500, refunded: 500 }), shared);
    const ambiguous = await deliver(refund, 'whsec_sharedA', HOOK);
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body).toEqual(refusal(400, ERRORS.stripeAccountAmbiguous.message));
    // Each connection's own address takes it.
    expect(await ok(refund, 'whsec_sharedA')).toMatchObject({ program_id: a.id, action: 'ignored', reason: 'sale_not_found' });
  });
});

describe(`[${dbKind}] intake limits`, () => {
  it('a body over 512 KiB answers 413 and stores nothing; a signed one just under the limit is processed', async () => {
    const big = (bytes: number): Json => {
      const e = event('plan.created', { ...fixture('event.json').data.object, padding: '' }, ACCT1);
      e.data.object.padding = 'x'.repeat(bytes - JSON.stringify(e).length);
      return e;
    };
    const over = big(512 * 1024 + 1);
    expect(JSON.stringify(over).length).toBe(512 * 1024 + 1);
    for (const to of [address.get(SECRET1)!, HOOK]) {
      const res = await deliver(over, SECRET1, to);
      expect(res.status).toBe(413);
      expect(res.body.error.name).toBe('PayloadTooLargeError');
    }
    expect(await s.db('processor_events').where({ event_id: over.id })).toHaveLength(0);
    const under = big(500 * 1000);
    expect(await ok(under)).toMatchObject({ program_id: 1, action: 'ignored' });
  });

  it('each address has its own budget; the shared address and unknown addresses count per client address', async () => {
    const { points } = LIMITS.rate.stripeWebhook;
    const ip = { 'x-forwarded-for': '192.0.2.77' };
    const remaining = async (to: string) => {
      const res = await s.raw(to, { method: 'POST', headers: { 'content-type': 'application/json', ...ip }, body: '{}' });
      expect(res.headers.get('x-ratelimit-limit')).toBe(String(points));
      return Number(res.headers.get('x-ratelimit-remaining'));
    };
    const one = address.get(SECRET1)!;
    const three = address.get(SECRET3)!;
    const r1 = await remaining(one);
    expect(await remaining(one)).toBe(r1 - 1);
    const r3 = await remaining(three);
    expect(await remaining(one)).toBe(r1 - 2);
    expect(await remaining(three)).toBe(r3 - 1);
    // The shared address and made-up ids share this client's budget, apart from the connections'.
    expect(await remaining(HOOK)).toBe(points - 1);
    expect(await remaining(`${HOOK}/whe_madeUp0000000000000000000000000000`)).toBe(points - 2);
    expect(await remaining(one)).toBe(r1 - 3);
  });

  it(`one request over ${LIMITS.rate.stripeWebhook.points} a minute to one address is 429; other addresses are unaffected`, async () => {
    const { points } = LIMITS.rate.stripeWebhook;
    const a = await createProgram(s.db, 1, { name: 'Busy', domain: 'busy.test', commission_type: 'percent', commission_rate: 10 }, Date.now());
    const busy = await connect(a.id, 'acct_busyShop', 'whsec_busyShop');
    const unsigned = () => s.raw(busy, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    for (let sent = 0; sent < points; sent += 50) {
      const answers = await Promise.all(Array.from({ length: Math.min(50, points - sent) }, unsigned));
      for (const res of answers) expect(res.status).toBe(400);
    }
    const refused = await deliver(event('plan.created', fixture('event.json').data.object), 'whsec_busyShop');
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await ok(event('plan.created', fixture('event.json').data.object), SECRET1)).toMatchObject({ program_id: 1 });
  });
});

describe(`[${dbKind}] 6.1 event types`, () => {
  it('an unknown event type answers 200 ignored', async () => {
    const e = fixture('event.json');
    e.id = uid('evt');
    e.created = Math.floor(Date.now() / 1000);
    const data = await ok(e);
    expect(data).toEqual({ event_id: e.id, type: 'plan.created', action: 'ignored', reason: 'unsupported_event_type', program_id: 1 });
    expect((await s.db('processor_events').where({ event_id: e.id }).first()).action).toBe('ignored');
  });
});

describe(`[${dbKind}] 6.1 checkout.session.completed (one-off payment)`, () => {
  it("a payment whose processor customer e-mail is the partner's own holds the commission for review (docs/commissions.md)", async () => {
    const clickId = await click(s, 'pat20');
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId, program_id: '1' }, email: 'Pat@P.test', customer: uid('cus'), amount: 3_000 });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    expect(data).toMatchObject({ action: 'recorded', commission_amount_cents: 600 });
    const [row] = await salesOf(cs.payment_intent);
    const commission = await s.db('commissions').where({ sale_id: row.id }).first('status', 'review_reasons', 'hold_until');
    expect(commission).toMatchObject({ status: 'pending', hold_until: null });
    // The checkout's e-mail is also saved on the customer by the lead it settles: both reasons.
    expect(String(commission.review_reasons).split(' ')).toContain('self_referral_processor_email');
  });

  it('records the sale under the payment intent, settles the provisional lead, remembers the processor customer', async () => {
    const clickId = await provisionalLead();
    const customer = uid('cus');
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId, reftrack_customer_key: 'user-checkout-1', program_id: '1' }, email: 'Buyer@Example.COM', customer, amount: 12_500 });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    expect(data).toMatchObject({
      action: 'recorded',
      program_id: 1,
      transaction_id: cs.payment_intent,
      attributed_by: 'click_id',
      lead_settled: true,
      commission_amount_cents: 2_500,
      currency: 'USD',
    });
    const [row] = await salesOf(cs.payment_intent);
    expect(row).toMatchObject({ amount_cents: 12_500, currency: 'USD', provider: 'stripe', provider_payment_id: cs.payment_intent, click_id: clickId });
    expect(Boolean(row.is_recurring)).toBe(false);
    expect(await s.db('commissions').where({ sale_id: row.id })).toHaveLength(1);
    expect(await s.db('platform_fees').where({ sale_id: row.id })).toHaveLength(1);
    const c = await customerOf(clickId);
    expect(c).toMatchObject({ status: 'lead', customer_key: 'user-checkout-1', email: 'buyer@example.com', processor_customer_id: customer });
    const lead = await s.db('lead_events').where({ customer_id: c.id }).first();
    expect(Boolean(lead.provisional)).toBe(false);
    expect(lead.settled_at).not.toBeNull();
  });

  it('uses the session id when the session has no payment intent', async () => {
    const clickId = await click(s);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId }, paymentIntent: null });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    expect(data).toMatchObject({ action: 'recorded', transaction_id: cs.id });
  });

  it('a subscription checkout is left to the invoice event: no sale, the provisional lead stays provisional', async () => {
    const clickId = await provisionalLead();
    const cs = checkoutSession({ mode: 'subscription', metadata: { reftrack_click_id: clickId }, customer: uid('cus') });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    expect(data).toMatchObject({ action: 'ignored', reason: 'subscription_checkout_left_to_invoice', processor_customer_linked: true });
    const c = await customerOf(clickId);
    expect(c.status).toBe('click');
    expect(c.processor_customer_id).toBe(cs.customer);
    expect(await s.db('sale_events').where({ customer_id: c.id })).toHaveLength(0);
    expect(Boolean((await s.db('lead_events').where({ customer_id: c.id }).first()).provisional)).toBe(true);
  });

  it('an unpaid session (delayed payment method) waits for async_payment_succeeded', async () => {
    const clickId = await click(s);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId }, paymentStatus: 'unpaid' });
    expect(await ok(event('checkout.session.completed', cs, ACCT1))).toMatchObject({ action: 'ignored', reason: 'payment_not_completed' });
    cs.payment_status = 'paid';
    expect(await ok(event('checkout.session.async_payment_succeeded', cs, ACCT1))).toMatchObject({ action: 'recorded', transaction_id: cs.payment_intent });
  });

  it('metadata naming another program, an unsupported currency, or no attribution: 200 ignored, nothing recorded', async () => {
    const clickId = await click(s);
    const other = checkoutSession({ metadata: { reftrack_click_id: clickId, program_id: '2' } });
    expect(await ok(event('checkout.session.completed', other, ACCT1))).toMatchObject({ action: 'ignored', reason: 'other_program' });
    const gbp = checkoutSession({ metadata: { reftrack_click_id: clickId }, currency: 'gbp' });
    expect(await ok(event('checkout.session.completed', gbp, ACCT1))).toMatchObject({ action: 'ignored', reason: 'unsupported_currency' });
    const nobody = checkoutSession({ metadata: { reftrack_click_id: 'clk_nobody0000000000000000' }, email: 'nobody@nowhere.test' });
    expect(await ok(event('checkout.session.completed', nobody, ACCT1))).toMatchObject({ action: 'ignored', reason: 'no_attribution' });
    expect((await customerOf(clickId)).converted_at).toBeNull();
  });

  it('a payment the advertiser already reported through the sale endpoint is not an error: 200 already_recorded', async () => {
    const clickId = await click(s);
    const pi = uid('pi');
    const reported = await sale(s, { transaction_id: pi, click_id: clickId });
    expect(reported.status).toBe(200);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId }, paymentIntent: pi });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    expect(data).toMatchObject({ action: 'already_recorded', reason: 'duplicate_transaction_id', sale_id: reported.body.data.sale_id });
    expect(await salesOf(pi)).toHaveLength(1);
    expect(await s.db('commissions').where({ sale_id: reported.body.data.sale_id })).toHaveLength(1);
  });
});

describe(`[${dbKind}] 3.1 provisional lead settlement`, () => {
  it('a plain sale call does not settle a provisional lead', async () => {
    const clickId = await provisionalLead();
    const res = await sale(s, { transaction_id: uid('txn'), click_id: clickId });
    expect(res.status, res.text).toBe(200);
    const c = await customerOf(clickId);
    expect(c.status).toBe('click');
    expect(Boolean((await s.db('lead_events').where({ customer_id: c.id }).first()).provisional)).toBe(true);
  });

  it('a subscription invoice settles it (first invoice), renewals are recurring sales', async () => {
    const clickId = await provisionalLead('p3');
    const metadata = { reftrack_click_id: clickId, reftrack_customer_key: 'sub-user-1', program_id: '3' };
    const customer = uid('cus');
    const first = invoice({ shape: 'parent', metadata, billingReason: 'subscription_create', amountPaid: 4_900, customer });
    const d1 = await ok(event('invoice.payment_succeeded', first, ACCT3), SECRET3);
    expect(d1).toMatchObject({ action: 'recorded', program_id: 3, transaction_id: first.id, lead_settled: true, attributed_by: 'click_id', commission_amount_cents: 500 });
    const c = await customerOf(clickId);
    expect(c).toMatchObject({ status: 'lead', customer_key: 'sub-user-1', processor_customer_id: customer });
    const [s1] = await salesOf(first.id);
    expect(Boolean(s1.is_recurring)).toBe(false);
    expect(s1.subscription_id).toBe(first.parent.subscription_details.subscription);

    const renewal = invoice({ shape: 'parent', metadata, billingReason: 'subscription_cycle', amountPaid: 4_900, customer });
    const d2 = await ok(event('invoice.payment_succeeded', renewal, ACCT3), SECRET3);
    expect(d2).toMatchObject({ action: 'recorded', transaction_id: renewal.id, lead_settled: false, commission_amount_cents: 500 });
    const [s2] = await salesOf(renewal.id);
    expect(Boolean(s2.is_recurring)).toBe(true);
  });

  it('skips an invoice with amount_paid ≤ 0 (200 ignored)', async () => {
    const clickId = await provisionalLead('p3');
    const inv = invoice({ shape: 'parent', metadata: { reftrack_click_id: clickId }, amountPaid: 0 });
    expect(await ok(event('invoice.payment_succeeded', inv, ACCT3), SECRET3)).toMatchObject({ action: 'ignored', reason: 'amount_paid_not_positive' });
    expect(await salesOf(inv.id)).toHaveLength(0);
    expect((await customerOf(clickId)).status).toBe('click');
  });
});

describe(`[${dbKind}] 9 both invoice shapes`, () => {
  it('reads the legacy invoice.subscription_details.metadata (before 2025-03-31)', async () => {
    const clickId = await click(s, 'p3');
    const inv = invoice({ shape: 'legacy', metadata: { reftrack_click_id: clickId, program_id: '3' }, paymentIntent: uid('pi') });
    const data = await ok(event('invoice.payment_succeeded', inv, ACCT3), SECRET3);
    expect(data).toMatchObject({ action: 'recorded', transaction_id: inv.id, attributed_by: 'click_id' });
    const [row] = await salesOf(inv.id);
    expect(row).toMatchObject({ subscription_id: inv.subscription, provider_payment_id: inv.payment_intent });
    expect(Boolean(row.is_recurring)).toBe(true);
  });

  it('reads invoice.parent.subscription_details.metadata first when both are present', async () => {
    const parentClick = await click(s, 'p3');
    const legacyClick = await click(s, 'p3');
    const inv = invoice({ shape: 'parent', metadata: { reftrack_click_id: parentClick } });
    inv.subscription_details = { metadata: { reftrack_click_id: legacyClick } };
    await ok(event('invoice.payment_succeeded', inv, ACCT3), SECRET3);
    const [row] = await salesOf(inv.id);
    expect(row.click_id).toBe(parentClick);
  });
});

describe(`[${dbKind}] 6.1 invoice.paid and invoice.payment_succeeded: one sale per invoice, in either order`, () => {
  async function renewal(): Promise<{ inv: Json; clickId: string }> {
    const clickId = await click(s);
    return { inv: invoice({ shape: 'parent', metadata: { reftrack_click_id: clickId, program_id: '1' }, amountPaid: 3_000 }), clickId };
  }

  async function countedOnce(invoiceId: string, saleId: number): Promise<void> {
    const rows = await salesOf(invoiceId);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].id)).toBe(saleId);
    expect(await s.db('commissions').where({ sale_id: saleId })).toHaveLength(1);
  }

  it('invoice.paid alone records the subscription payment, keyed by the invoice id (an endpoint subscribed only to it gets its sales)', async () => {
    const { inv } = await renewal();
    const data = await ok(event('invoice.paid', inv, ACCT1));
    expect(data).toMatchObject({ action: 'recorded', transaction_id: inv.id, attributed_by: 'click_id', commission_amount_cents: 600 });
    const [row] = await salesOf(inv.id);
    expect(row).toMatchObject({ amount_cents: 3_000, sale_type: 'subscription' });
    expect(Boolean(row.is_recurring)).toBe(true);
  });

  it('invoice.payment_succeeded first, then invoice.paid: the second answers already_recorded with the sale id', async () => {
    const { inv } = await renewal();
    const first = await ok(event('invoice.payment_succeeded', inv, ACCT1));
    expect(first.action).toBe('recorded');
    const second = await ok(event('invoice.paid', inv, ACCT1));
    expect(second).toMatchObject({ action: 'already_recorded', reason: 'duplicate_transaction_id', sale_id: first.sale_id, transaction_id: inv.id });
    await countedOnce(inv.id, Number(first.sale_id));
  });

  it('invoice.paid first, then invoice.payment_succeeded: the second answers already_recorded with the sale id', async () => {
    const { inv } = await renewal();
    const first = await ok(event('invoice.paid', inv, ACCT1));
    expect(first.action).toBe('recorded');
    const second = await ok(event('invoice.payment_succeeded', inv, ACCT1));
    expect(second).toMatchObject({ action: 'already_recorded', reason: 'duplicate_transaction_id', sale_id: first.sale_id, transaction_id: inv.id });
    await countedOnce(inv.id, Number(first.sale_id));
  });

  it('both at the same moment: one records, the other answers already_recorded', async () => {
    const { inv } = await renewal();
    const [a, b] = await Promise.all([deliver(event('invoice.payment_succeeded', inv, ACCT1)), deliver(event('invoice.paid', inv, ACCT1))]);
    expect(a.status, a.text).toBe(200);
    expect(b.status, b.text).toBe(200);
    const actions = [a.body.data.action, b.body.data.action].sort();
    expect(actions).toEqual(['already_recorded', 'recorded']);
    const recorded = [a, b].find((r) => r.body.data.action === 'recorded')!;
    await countedOnce(inv.id, Number(recorded.body.data.sale_id));
  });

  it('an invoice the advertiser already reported through the sale endpoint is not counted again', async () => {
    const { inv, clickId } = await renewal();
    const reported = await sale(s, { transaction_id: inv.id, amount_cents: 3_000, click_id: clickId });
    expect(reported.status, reported.text).toBe(200);
    const data = await ok(event('invoice.paid', inv, ACCT1));
    expect(data).toMatchObject({ action: 'already_recorded', sale_id: reported.body.data.sale_id });
    await countedOnce(inv.id, Number(reported.body.data.sale_id));
  });

  it('invoice.paid of a fully credited cycle is ignored like invoice.payment_succeeded (amount_paid_not_positive)', async () => {
    const clickId = await click(s);
    const inv = invoice({ shape: 'parent', metadata: { reftrack_click_id: clickId }, amountPaid: 0 });
    expect(await ok(event('invoice.paid', inv, ACCT1))).toMatchObject({ action: 'ignored', reason: 'amount_paid_not_positive' });
    expect(await salesOf(inv.id)).toHaveLength(0);
  });
});

describe(`[${dbKind}] 6.1 rule 3 attribution order`, () => {
  it('1. the click id metadata comes first (over a matching e-mail)', async () => {
    const byClick = await click(s);
    const byEmail = await click(s);
    await serverLead(byEmail, { customer_key: uid('u'), email: 'first-rule@example.test' });
    const cs = checkoutSession({ metadata: { reftrack_click_id: byClick }, email: 'first-rule@example.test' });
    expect(await ok(event('checkout.session.completed', cs, ACCT1))).toMatchObject({ action: 'recorded', attributed_by: 'click_id' });
    expect((await salesOf(cs.payment_intent))[0].click_id).toBe(byClick);
  });

  it('2. then the e-mail matched to a lead (over the processor customer id)', async () => {
    const byEmail = await click(s);
    await serverLead(byEmail, { customer_key: uid('u'), email: 'second-rule@example.test' });
    const byCustomer = await click(s);
    const cus = uid('cus');
    await s.db('customers').where({ click_id: byCustomer }).update({ processor_customer_id: cus });
    const cs = checkoutSession({ email: 'Second-Rule@Example.test', customer: cus });
    expect(await ok(event('checkout.session.completed', cs, ACCT1))).toMatchObject({ action: 'recorded', attributed_by: 'email' });
    expect((await salesOf(cs.payment_intent))[0].click_id).toBe(byEmail);
  });

  it('3. then the processor customer id remembered from an earlier attributed session (over the customer key)', async () => {
    const clickId = await click(s, 'p3');
    await serverLead(clickId, { customer_key: uid('u') }, LEGACY_KEY);
    const cus = uid('cus');
    // The attributed subscription checkout teaches the cus_ id …
    const cs = checkoutSession({ mode: 'subscription', metadata: { reftrack_click_id: clickId }, customer: cus });
    await ok(event('checkout.session.completed', cs, ACCT3), SECRET3);
    // … so a renewal whose subscription carries no metadata is still attributed.
    const keyed = await click(s, 'p3');
    await serverLead(keyed, { customer_key: 'key-of-someone-else' }, LEGACY_KEY);
    const inv = invoice({ shape: 'parent', metadata: { reftrack_customer_key: 'key-of-someone-else' }, customer: cus });
    expect(await ok(event('invoice.payment_succeeded', inv, ACCT3), SECRET3)).toMatchObject({ action: 'recorded', attributed_by: 'processor_customer_id' });
    expect((await salesOf(inv.id))[0].click_id).toBe(clickId);
  });

  it('4. then reftrack_customer_key alone', async () => {
    const clickId = await click(s);
    const key = uid('user');
    await serverLead(clickId, { customer_key: key });
    const cs = checkoutSession({ metadata: { reftrack_customer_key: key }, email: 'not-a-lead@example.test', customer: uid('cus') });
    expect(await ok(event('checkout.session.completed', cs, ACCT1))).toMatchObject({ action: 'recorded', attributed_by: 'customer_key' });
    expect((await salesOf(cs.payment_intent))[0].click_id).toBe(clickId);
  });

  it('a click id of another program does not match; the next step is tried', async () => {
    const foreign = await click(s, 'open1'); // program 2
    const clickId = await click(s);
    const key = uid('user');
    await serverLead(clickId, { customer_key: key });
    const cs = checkoutSession({ metadata: { reftrack_click_id: foreign, reftrack_customer_key: key } });
    expect(await ok(event('checkout.session.completed', cs, ACCT1))).toMatchObject({ action: 'recorded', attributed_by: 'customer_key' });
  });
});

describe(`[${dbKind}] 6.1 deduplication`, () => {
  it('a replayed event answers 200 duplicate: one sale, one commission', async () => {
    const clickId = await click(s);
    const e = event('checkout.session.completed', checkoutSession({ metadata: { reftrack_click_id: clickId } }), ACCT1);
    expect((await ok(e)).action).toBe('recorded');
    const again = await ok(e);
    expect(again).toEqual({ event_id: e.id, type: e.type, action: 'duplicate', reason: 'event_already_received', program_id: 1 });
    const rows = await salesOf(e.data.object.payment_intent);
    expect(rows).toHaveLength(1);
    expect(await s.db('commissions').where({ sale_id: rows[0].id })).toHaveLength(1);
    expect(await s.db('processor_events').where({ event_id: e.id })).toHaveLength(1);
  });

  it('identical deliveries at the same time: one processes, the others answer duplicate', async () => {
    const clickId = await click(s);
    const e = event('checkout.session.completed', checkoutSession({ metadata: { reftrack_click_id: clickId } }), ACCT1);
    const results = await Promise.all(Array.from({ length: 5 }, () => deliver(e)));
    for (const r of results) expect(r.status, r.text).toBe(200);
    const actions = results.map((r) => r.body.data.action).sort();
    expect(actions).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'recorded']);
    const rows = await salesOf(e.data.object.payment_intent);
    expect(rows).toHaveLength(1);
    expect(await s.db('commissions').where({ sale_id: rows[0].id })).toHaveLength(1);
    expect(await s.db('processor_events').where({ event_id: e.id })).toHaveLength(1);
  });

  it('a failure inside the transaction answers 5xx and leaves nothing; the retry processes the event', async () => {
    const clickId = await provisionalLead();
    const e = event('checkout.session.completed', checkoutSession({ metadata: { reftrack_click_id: clickId } }), ACCT1);
    s.faults.afterSaleInsert = () => {
      throw new Error('database connection lost');
    };
    try {
      const res = await deliver(e);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ data: null, error: { status: 500, name: 'InternalServerError', message: 'Stripe webhook processing failed', details: {} } });
    } finally {
      delete s.faults.afterSaleInsert;
    }
    expect(await s.db('processor_events').where({ event_id: e.id })).toHaveLength(0);
    expect(await salesOf(e.data.object.payment_intent)).toHaveLength(0);
    // The lead settlement ran in the same transaction and was rolled back too.
    expect((await customerOf(clickId)).status).toBe('click');
    const retry = await ok(e);
    expect(retry).toMatchObject({ action: 'recorded', lead_settled: true });
    expect(await salesOf(e.data.object.payment_intent)).toHaveLength(1);
  });
});

describe(`[${dbKind}] 6.1 refunds and disputes`, () => {
  async function soldCheckout(amount = 10_000): Promise<{ pi: string; saleId: number; commissionId: number }> {
    const clickId = await click(s);
    const cs = checkoutSession({ metadata: { reftrack_click_id: clickId }, amount });
    const data = await ok(event('checkout.session.completed', cs, ACCT1));
    return { pi: cs.payment_intent, saleId: data.sale_id, commissionId: data.commission_id };
  }

  it('a full refund reverses the commission and its platform fee', async () => {
    const { pi, saleId, commissionId } = await soldCheckout();
    const refundId = uid('re');
    const data = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 10_000, refunded: 10_000, refundId }), ACCT1));
    expect(data).toMatchObject({ action: 'reversed', sale_id: saleId, transaction_id: pi, fraction: 1, commission_id: commissionId, commission_status: 'reversed', adjustment_amount_cents: 0 });
    expect((await s.db('commissions').where({ id: commissionId }).first()).status).toBe('reversed');
    expect((await s.db('platform_fees').where({ commission_id: commissionId }).first()).status).toBe('reversed');
    expect(await s.db('refunds').where({ sale_id: saleId })).toEqual([expect.objectContaining({ reason: 'refund', external_ref: refundId, refund_reason: 'requested_by_customer' })]);
  });

  it('partial refunds of a paid commission are prorated (amount_refunded / amount), cumulative amounts counted once', async () => {
    const { pi, saleId, commissionId } = await soldCheckout(10_000); // commission 2000
    await s.db('commissions').where({ id: commissionId }).update({ status: 'paid' });
    const first = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 10_000, refunded: 3_000 }), ACCT1));
    expect(first).toMatchObject({ action: 'reversed', fraction: 0.3, refunded_amount_cents: 3_000, commission_status: 'paid', adjustment_amount_cents: -600 });
    // Stripe's amount_refunded is cumulative: 3000 + 2000 now.
    const second = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 10_000, refunded: 5_000 }), ACCT1));
    expect(second).toMatchObject({ refunded_amount_cents: 2_000, fraction: 0.2, commission_status: 'paid', adjustment_amount_cents: -400 });
    // The rest: the commission ends reversed, 2000 clawed back in all.
    const last = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 10_000, refunded: 10_000 }), ACCT1));
    expect(last).toMatchObject({ refunded_amount_cents: 5_000, commission_status: 'reversed', adjustment_amount_cents: -1_000 });
    const adjustments = await s.db('commission_adjustments').where({ commission_id: commissionId });
    expect(adjustments.map((a) => Number(a.amount_cents)).reduce((x, y) => x + y, 0)).toBe(-2_000);
    expect(await s.db('refunds').where({ sale_id: saleId })).toHaveLength(3);
  });

  it('a partial refund of a pending commission reverses it (as the refund endpoint does)', async () => {
    const { pi, commissionId } = await soldCheckout();
    const data = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 10_000, refunded: 2_500 }), ACCT1));
    expect(data).toMatchObject({ fraction: 0.25, commission_status: 'reversed', adjustment_amount_cents: 0 });
    expect((await s.db('commissions').where({ id: commissionId }).first()).status).toBe('reversed');
  });

  it('a dispute reverses the commission (chargeback), once per dispute id', async () => {
    const { pi, saleId, commissionId } = await soldCheckout();
    await s.db('commissions').where({ id: commissionId }).update({ status: 'paid' });
    const dp = fixture('dispute.json');
    dp.id = uid('dp');
    dp.amount = 10_000;
    dp.payment_intent = pi;
    const data = await ok(event('charge.dispute.created', dp, ACCT1));
    expect(data).toMatchObject({ action: 'reversed', reason: 'chargeback', sale_id: saleId, fraction: 1, commission_status: 'reversed', adjustment_amount_cents: -2_000 });
    const again = await ok(event('charge.dispute.created', dp, ACCT1)); // same dispute, new event id
    expect(again).toMatchObject({ action: 'ignored', reason: 'dispute_already_recorded' });
    expect(await s.db('refunds').where({ sale_id: saleId, reason: 'chargeback', external_ref: dp.id })).toHaveLength(1);
    expect(await s.db('commission_adjustments').where({ commission_id: commissionId })).toHaveLength(1);
  });

  it('finds an invoice sale through invoice_payment.paid (2025-03-31+) and through the legacy charge.invoice', async () => {
    const clickId = await click(s, 'p3');
    const inv = invoice({ shape: 'parent', metadata: { reftrack_click_id: clickId }, amountPaid: 3_000 });
    const sold = await ok(event('invoice.payment_succeeded', inv, ACCT3), SECRET3);
    const pi = uid('pi');
    const link = await ok(event('invoice_payment.paid', { id: uid('inpay'), object: 'invoice_payment', invoice: inv.id, payment: { type: 'payment_intent', payment_intent: pi }, amount_paid: 3_000, currency: 'usd', livemode: false }, ACCT3), SECRET3);
    expect(link).toMatchObject({ action: 'linked', invoice_id: inv.id });
    const refunded = await ok(event('charge.refunded', charge({ paymentIntent: pi, amount: 3_000, refunded: 3_000 }), ACCT3), SECRET3);
    expect(refunded).toMatchObject({ action: 'reversed', sale_id: sold.sale_id, transaction_id: inv.id, commission_status: 'reversed' });

    const legacyClick = await click(s, 'p3');
    const legacy = invoice({ shape: 'legacy', metadata: { reftrack_click_id: legacyClick }, amountPaid: 3_000 });
    const legacySold = await ok(event('invoice.payment_succeeded', legacy, ACCT3), SECRET3);
    const legacyCharge = charge({ amount: 3_000, refunded: 3_000, invoice: legacy.id });
    const viaInvoice = await ok(event('charge.refunded', legacyCharge, ACCT3), SECRET3);
    expect(viaInvoice).toMatchObject({ action: 'reversed', sale_id: legacySold.sale_id, transaction_id: legacy.id });
  });

  it('a refund of a charge Reftrack never recorded answers 200 ignored', async () => {
    const data = await ok(event('charge.refunded', charge({ paymentIntent: uid('pi'), amount: 500, refunded: 500 }), ACCT1));
    expect(data).toMatchObject({ action: 'ignored', reason: 'sale_not_found' });
  });
});
