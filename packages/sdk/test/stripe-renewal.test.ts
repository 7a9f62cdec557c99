/** Built from Stripe's own sample objects (fixtures/), changed per case. */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BRAND, ERRORS } from '@reftrack/contract';
import { InvalidRequestError, Reftrack, reportStripeRenewal, type StripeEventLike } from '../src/index.js';
import { platformError, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

type Json = Record<string, any>; // Stripe's sample objects, read from disk and edited per test.

function fixture(name: string): Json {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Json;
}

const METADATA = { [BRAND.metadataCustomerKey]: 'user_42', [BRAND.metadataClickId]: 'clk_abc', [BRAND.metadataProgramId]: '1' };

/** A paid renewal invoice in the current (2025-03-31+) shape. */
function currentInvoice(): Json {
  const invoice = fixture('invoice_2025_03_31_parent.json');
  invoice.billing_reason = 'subscription_cycle';
  invoice.amount_paid = 2000;
  invoice.status = 'paid';
  invoice.parent.type = 'subscription_details';
  invoice.parent.subscription_details.subscription = 'sub_1Pgc6rB7WZ01zgkWNy0Cn5nw';
  invoice.parent.subscription_details.metadata = { ...METADATA };
  return invoice;
}

/** The same renewal in the legacy (before 2025-03-31) shape. */
function legacyInvoice(): Json {
  const invoice = fixture('invoice_legacy_pre_2025_03_31.json');
  invoice.billing_reason = 'subscription_cycle';
  invoice.amount_paid = 2000;
  invoice.status = 'paid';
  invoice.subscription = 'sub_legacy_1';
  invoice.subscription_details.metadata = { ...METADATA };
  return invoice;
}

function invoicePaid(invoice: Json, type = 'invoice.paid'): StripeEventLike {
  const event = fixture('event.json');
  event.type = type;
  event.data.object = invoice;
  return event as StripeEventLike;
}

let server: ScriptedServer;
let client: Reftrack;
beforeEach(async () => {
  server = await startScriptedServer((request) => ({
    status: 200,
    body: { success: true, data: { attributed: true, sale_id: 1, transaction_id: (request.body as Json).transaction_id, commission_id: 1, commission_amount_cents: 400, currency: 'USD' } },
  }));
  client = new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: () => {} });
});
afterEach(() => server.close());

describe('reportStripeRenewal reports', () => {
  it('a renewal in the current shape, with metadata and subscription from invoice.parent', async () => {
    const invoice = currentInvoice();
    const outcome = await reportStripeRenewal(client, invoicePaid(invoice));
    expect(outcome.action).toBe('reported');
    expect(server.received).toHaveLength(1);
    expect(server.received[0].body).toEqual({
      transaction_id: invoice.id,
      amount_cents: 2000,
      customer_key: 'user_42',
      click_id: 'clk_abc',
      currency: 'usd',
      is_recurring: true,
      subscription_id: 'sub_1Pgc6rB7WZ01zgkWNy0Cn5nw',
      provider: 'stripe',
      livemode: false,
    });
  });

  it('a renewal in the legacy shape, with metadata from invoice.subscription_details', async () => {
    const invoice = legacyInvoice();
    invoice.payment_intent = 'pi_legacy';
    invoice.currency = 'eur';
    const outcome = await reportStripeRenewal(client, invoicePaid(invoice));
    expect(outcome.action).toBe('reported');
    expect(server.received[0].body).toMatchObject({
      transaction_id: invoice.id,
      amount_cents: 2000,
      customer_key: 'user_42',
      currency: 'eur',
      is_recurring: true,
      subscription_id: 'sub_legacy_1',
      provider_payment_id: 'pi_legacy',
    });
  });

  it('prefers invoice.parent metadata over the legacy location when both are present', async () => {
    const invoice = currentInvoice();
    invoice.subscription_details = { metadata: { ...METADATA, [BRAND.metadataCustomerKey]: 'stale_user' } };
    await reportStripeRenewal(client, invoicePaid(invoice));
    expect((server.received[0].body as Json).customer_key).toBe('user_42');
  });

  it('falls back to the legacy metadata when invoice.parent has none', async () => {
    const invoice = currentInvoice();
    invoice.parent.subscription_details.metadata = null;
    invoice.subscription_details = { metadata: { ...METADATA } };
    await reportStripeRenewal(client, invoicePaid(invoice));
    expect((server.received[0].body as Json).customer_key).toBe('user_42');
  });

  it('reads an expanded subscription object and a recent paid_at', async () => {
    const invoice = currentInvoice();
    invoice.parent.subscription_details.subscription = { id: 'sub_expanded', object: 'subscription' };
    const paidAt = Math.floor(Date.now() / 1000) - 3600;
    invoice.status_transitions.paid_at = paidAt;
    await reportStripeRenewal(client, invoicePaid(invoice));
    expect(server.received[0].body).toMatchObject({ subscription_id: 'sub_expanded', occurred_at: new Date(paidAt * 1000).toISOString() });
  });

  it('leaves out a paid_at older than the sale call accepts', async () => {
    const invoice = currentInvoice();
    invoice.status_transitions.paid_at = Math.floor(Date.now() / 1000) - 40 * 86_400;
    await reportStripeRenewal(client, invoicePaid(invoice));
    expect(server.received[0].body).not.toHaveProperty('occurred_at');
  });

  it('reports with the click id alone when the customer key is missing', async () => {
    const invoice = currentInvoice();
    delete invoice.parent.subscription_details.metadata[BRAND.metadataCustomerKey];
    await reportStripeRenewal(client, invoicePaid(invoice));
    expect(server.received[0].body).toMatchObject({ click_id: 'clk_abc' });
    expect(server.received[0].body).not.toHaveProperty('customer_key');
  });

  it('answers a redelivered event as a duplicate, keyed by the invoice id', async () => {
    await server.close();
    server = await startScriptedServer([{ status: 409, body: platformError(ERRORS.saleDuplicate, {}, { sale_id: 8 }) }]);
    client = new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: () => {} });
    const outcome = await reportStripeRenewal(client, invoicePaid(currentInvoice()));
    expect(outcome).toMatchObject({ action: 'reported', result: { duplicate: true, saleId: 8 } });
  });

  it('throws what the sale call refuses, for the webhook handler to decide', async () => {
    await server.close();
    server = await startScriptedServer([{ status: 400, body: platformError(ERRORS.saleCustomerNotFound) }]);
    client = new Reftrack({ apiKey: 'aff_k', baseUrl: server.url, onWarning: () => {} });
    await expect(reportStripeRenewal(client, invoicePaid(currentInvoice()))).rejects.toBeInstanceOf(InvalidRequestError);
  });
});

describe('reportStripeRenewal skips', () => {
  it.each([
    ['another event type', () => invoicePaid(currentInvoice(), 'invoice.payment_succeeded'), 'not_invoice_paid'],
    ['the first invoice of a subscription', () => invoicePaid({ ...currentInvoice(), billing_reason: 'subscription_create' }), 'not_subscription_cycle'],
    ["Stripe's sample as is (billing_reason manual)", () => invoicePaid(fixture('invoice_2025_03_31_parent.json')), 'not_subscription_cycle'],
    ['a zero amount', () => invoicePaid({ ...currentInvoice(), amount_paid: 0 }), 'non_positive_amount'],
    ['a negative amount', () => invoicePaid({ ...legacyInvoice(), amount_paid: -5 }), 'non_positive_amount'],
    [
      'a subscription without reftrack metadata',
      () => {
        const invoice = legacyInvoice();
        invoice.subscription_details.metadata = {};
        return invoicePaid(invoice);
      },
      'no_reftrack_metadata',
    ],
    ['a renewal of a plain event.json (a plan, not an invoice)', () => ({ ...(fixture('event.json') as StripeEventLike), type: 'invoice.paid' }), 'not_subscription_cycle'],
  ])('%s', async (_label, makeEvent, reason) => {
    const outcome = await reportStripeRenewal(client, makeEvent());
    expect(outcome).toMatchObject({ action: 'skipped', reason });
    expect(server.received).toHaveLength(0);
  });

  it('another program, when the client says which program it reports for', async () => {
    const outcome = await reportStripeRenewal(client, invoicePaid(currentInvoice()), { programId: 2 });
    expect(outcome).toMatchObject({ action: 'skipped', reason: 'other_program' });
    await reportStripeRenewal(client, invoicePaid(currentInvoice()), { programId: 1 });
    expect(server.received).toHaveLength(1);
  });

  it('rejects unknown options', async () => {
    await expect(reportStripeRenewal(client, invoicePaid(currentInvoice()), { program: 1 } as never)).rejects.toThrow(/unknown option "program"/);
  });
});
