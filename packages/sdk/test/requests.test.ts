import { afterEach, describe, expect, it } from 'vitest';
import { ERRORS, ROUTES } from '@reftrack/contract';
import { APIError, Reftrack, SDK_VERSION } from '../src/index.js';
import { platformError, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

const KEY = 'aff_testkey0123456789abcdefghijklmnop';
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(url: string) {
  return new Reftrack({ apiKey: KEY, baseUrl: url, onWarning: () => {} });
}

describe('trackSale', () => {
  it('maps every field to the raw name and sends the key', async () => {
    const data = { attributed: true, sale_id: 7, transaction_id: 'in_1', commission_id: 3, commission_amount_cents: 400, currency: 'USD' };
    server = await startScriptedServer([{ status: 200, body: { success: true, data } }]);
    const occurredAt = new Date('2026-01-02T03:04:05.000Z');
    const result = await client(server.url).trackSale({
      customerExternalId: 'user_42',
      clickId: 'clk_abc',
      amount: 2000,
      currency: 'eur',
      invoiceId: 'in_1',
      isRecurring: true,
      saleType: 'subscription',
      subscriptionId: 'sub_1',
      occurredAt,
      provider: 'stripe',
      providerPaymentId: 'pi_1',
      livemode: false,
      additionalData: { plan: 'pro' },
    });

    const [request] = server.received;
    expect(request.method).toBe('POST');
    expect(request.url).toBe(ROUTES.trackSale.path);
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toContain(`reftrack-sdk-node/${SDK_VERSION}`);
    expect(request.body).toEqual({
      transaction_id: 'in_1',
      amount_cents: 2000,
      customer_key: 'user_42',
      click_id: 'clk_abc',
      currency: 'eur',
      is_recurring: true,
      sale_type: 'subscription',
      subscription_id: 'sub_1',
      occurred_at: '2026-01-02T03:04:05.000Z',
      provider: 'stripe',
      provider_payment_id: 'pi_1',
      livemode: false,
      additional_data: { plan: 'pro' },
    });
    expect(result).toEqual({ duplicate: false, data, requestId: 'req_1', warnings: [] });
  });

  it('defaults the currency to usd and leaves unset fields out', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: { attributed: false, reason: 'attribution_window_expired' } } }]);
    const result = await client(server.url).trackSale({ customerExternalId: 'user_42', amount: 500, invoiceId: 'in_2' });
    expect(server.received[0].body).toEqual({ transaction_id: 'in_2', amount_cents: 500, customer_key: 'user_42', currency: 'usd' });
    expect(result.duplicate === false && result.data).toEqual({ attributed: false, reason: 'attribution_window_expired' });
  });

  it('passes an occurredAt string through unchanged', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: {} } }]);
    await client(server.url).trackSale({ clickId: 'clk_1', amount: 1, invoiceId: 'in_3', occurredAt: '2026-01-02T03:04:05+02:00' });
    expect((server.received[0].body as { occurred_at: string }).occurred_at).toBe('2026-01-02T03:04:05+02:00');
  });

  it('turns the 409 duplicate into a success carrying the recorded sale id', async () => {
    server = await startScriptedServer([{ status: 409, body: platformError(ERRORS.saleDuplicate, {}, { sale_id: 99 }) }]);
    const result = await client(server.url).trackSale({ customerExternalId: 'user_42', amount: 500, invoiceId: 'in_dup' });
    expect(result).toEqual({ duplicate: true, saleId: 99, transactionId: 'in_dup', requestId: 'req_1', warnings: [] });
    expect(server.received).toHaveLength(1);
  });

  it.each([
    ['missing', {}],
    ['null', { sale_id: null }],
    ['a string', { sale_id: '99' }],
  ])('throws APIError when the 409 duplicate carries no numeric sale id (%s)', async (_what, details) => {
    server = await startScriptedServer([{ status: 409, body: platformError(ERRORS.saleDuplicate, {}, details) }]);
    const call = client(server.url).trackSale({ customerExternalId: 'user_42', amount: 500, invoiceId: 'in_dup' });
    await expect(call).rejects.toBeInstanceOf(APIError);
    await expect(call).rejects.toThrow(/without a sale id \(error\.details\.sale_id should be a positive integer/);
    expect(server.received).toHaveLength(1);
  });
});

describe('trackLead', () => {
  it('sends click_id, customer_key and email with the key (server mode)', async () => {
    const data = { click_id: 'clk_1', customer_status: 'lead', lead_id: 5 };
    server = await startScriptedServer([{ status: 200, body: { success: true, data } }]);
    const result = await client(server.url).trackLead({ clickId: 'clk_1', customerExternalId: 'user_42', email: 'ada@example.com' });
    expect(server.received[0].url).toBe(ROUTES.trackLead.path);
    expect(server.received[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.received[0].body).toEqual({ click_id: 'clk_1', customer_key: 'user_42', email: 'ada@example.com' });
    expect(result).toEqual({ alreadyLead: false, provisional: false, data, requestId: 'req_1', warnings: [] });
  });

  it('reports provisional: true from the top level of the body', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, provisional: true, data: { click_id: 'clk_1', customer_status: 'click', lead_id: 5 } } }]);
    const result = await client(server.url).trackLead({ clickId: 'clk_1' });
    expect(result.alreadyLead === false && result.provisional).toBe(true);
  });

  it('reports the "already a lead" 400 when asked to, and throws it otherwise', async () => {
    server = await startScriptedServer([{ status: 400, body: platformError(ERRORS.leadStatus, { status: 'lead' }) }]);
    const ignored = await client(server.url).trackLead({ clickId: 'clk_1', customerExternalId: 'u' }, { ignoreAlreadyLead: true });
    expect(ignored).toEqual({ alreadyLead: true, status: 'lead', requestId: 'req_1', warnings: [] });
    await expect(client(server.url).trackLead({ clickId: 'clk_1', customerExternalId: 'u' })).rejects.toMatchObject({
      name: 'InvalidRequestError',
      status: 400,
    });
  });

  it('still throws other lead 400s when ignoreAlreadyLead is set', async () => {
    server = await startScriptedServer([{ status: 400, body: platformError(ERRORS.leadWrongProgram) }]);
    await expect(client(server.url).trackLead({ customerExternalId: 'u' }, { ignoreAlreadyLead: true })).rejects.toMatchObject({
      message: ERRORS.leadWrongProgram.message,
    });
  });
});

describe('trackRefund, readiness, sendTestSale', () => {
  it('maps the refund fields', async () => {
    const data = { refund_id: 1, sale_id: 7, transaction_id: 'in_1', reason: 'chargeback', commission_id: 3, commission_status: 'reversed', adjustment_amount_cents: -400 };
    server = await startScriptedServer([{ status: 200, body: { success: true, data } }]);
    const result = await client(server.url).trackRefund({ invoiceId: 'in_1', reason: 'chargeback', refundReason: 'disputed' });
    expect(server.received[0].url).toBe(ROUTES.trackRefund.path);
    expect(server.received[0].body).toEqual({ transaction_id: 'in_1', reason: 'chargeback', refund_reason: 'disputed' });
    expect(result.data).toEqual(data);
  });

  it('reads readiness with a GET and no body', async () => {
    const data = { program_id: 1, ready: false, key_status: 'active', rotate_by: null, checklist: [] };
    server = await startScriptedServer([{ status: 200, body: { success: true, data } }]);
    const result = await client(server.url).readiness();
    expect(server.received[0]).toMatchObject({ method: 'GET', url: ROUTES.readiness.path, body: undefined });
    expect(server.received[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.received[0].headers['content-type']).toBeUndefined();
    expect(result.data).toEqual(data);
  });

  it('sends the test sale as a body of only additional_data.test_mode', async () => {
    const data = { test_mode: true, sale_id: 11, transaction_id: 'test_txn_1' };
    server = await startScriptedServer([{ status: 200, body: { success: true, data } }]);
    const result = await client(server.url).sendTestSale();
    expect(server.received[0].url).toBe(ROUTES.trackSale.path);
    expect(server.received[0].body).toEqual({ additional_data: { test_mode: true } });
    expect(result.data).toEqual(data);
  });
});

describe('trackClick', () => {
  it('is public: it never sends the key', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, click_id: 'clk_1', partner_code: 'pat', cookie_window_days: 60 } }]);
    const result = await client(server.url).trackClick({ affiliateUrl: 'https://acme.test/?aff=pat20', existingClickId: 'clk_0' });
    expect(server.received[0].headers.authorization).toBeUndefined();
    expect(server.received[0].body).toEqual({ affiliate_url: 'https://acme.test/?aff=pat20', existing_click_id: 'clk_0' });
    expect(result).toEqual({ click_id: 'clk_1', partner_code: 'pat', cookie_window_days: 60, requestId: 'req_1', warnings: [] });
  });
});

describe('trackClick retries', () => {
  it('are off by default (a click has no idempotency key) and on when asked', async () => {
    server = await startScriptedServer([
      { status: 500, body: platformError(ERRORS.clickFailed) },
      { status: 200, body: { success: true, click_id: 'clk_1', partner_code: 'pat', cookie_window_days: 60 } },
    ]);
    await expect(client(server.url).trackClick({ affiliateUrl: 'https://acme.test/?aff=pat20' })).rejects.toMatchObject({ status: 500 });
    expect(server.received).toHaveLength(1);
    const result = await client(server.url).trackClick({ affiliateUrl: 'https://acme.test/?aff=pat20' }, { maxRetries: 1 });
    expect(result.click_id).toBe('clk_1');
  });
});

describe('calls that need the key', () => {
  it('fail before any request when no key is configured', async () => {
    server = await startScriptedServer([{ status: 200, body: { success: true, data: {} } }]);
    const saved = process.env.REFTRACK_API_KEY;
    delete process.env.REFTRACK_API_KEY;
    try {
      const keyless = new Reftrack({ baseUrl: server.url });
      await expect(keyless.sendTestSale()).rejects.toMatchObject({ name: 'AuthenticationError' });
      await expect(keyless.readiness()).rejects.toThrow(/REFTRACK_API_KEY/);
    } finally {
      if (saved !== undefined) process.env.REFTRACK_API_KEY = saved;
    }
    expect(server.received).toHaveLength(0);
  });
});
