import { afterEach, describe, expect, it } from 'vitest';
import { ERRORS, ROUTES } from '@reftrack/contract';
import { APIError, ConnectionError, InvalidRequestError, RateLimitError, Reftrack } from '../src/index.js';
import { platformError, startScriptedServer, typedError, type Reply, type ScriptedServer } from './helpers/scripted-server.js';

const KEY = 'aff_testkey0123456789abcdefghijklmnop';
const SALE = { customerExternalId: 'user_42', amount: 2000, invoiceId: 'in_retry' } as const;
const SALE_OK: Reply = { status: 200, body: { success: true, data: { attributed: true, sale_id: 1, transaction_id: 'in_retry', commission_id: 1, commission_amount_cents: 400, currency: 'USD' } } };
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function client(url: string, options: { maxRetries?: number; timeoutMs?: number } = {}) {
  return new Reftrack({ apiKey: KEY, baseUrl: url, onWarning: () => {}, ...options });
}

describe('retries', () => {
  it('waits Retry-After seconds after a 429, then succeeds', async () => {
    server = await startScriptedServer([
      { status: 429, body: typedError(ERRORS.rateLimited, { seconds: 1 }, { status: 429, retry_after_seconds: 1 }), headers: { 'retry-after': '1' } },
      SALE_OK,
    ]);
    const result = await client(server.url).trackSale(SALE);
    expect(result.duplicate).toBe(false);
    expect(server.received).toHaveLength(2);
    expect(server.received[1].at - server.received[0].at).toBeGreaterThanOrEqual(950);
  });

  it('retries a 500 and keeps the transaction_id, so the repeat cannot count twice', async () => {
    server = await startScriptedServer([{ status: 500, body: platformError(ERRORS.saleFailed) }, SALE_OK]);
    const result = await client(server.url).trackSale(SALE);
    expect(result.duplicate).toBe(false);
    expect(server.received).toHaveLength(2);
    expect(server.received[1].body).toEqual(server.received[0].body);
  });

  it('reports a 409 on the retry of a recorded attempt as a duplicate success', async () => {
    server = await startScriptedServer([
      { status: 502, raw: 'Bad Gateway' },
      { status: 409, body: platformError(ERRORS.saleDuplicate, {}, { sale_id: 5 }) },
    ]);
    const result = await client(server.url).trackSale(SALE);
    expect(result).toMatchObject({ duplicate: true, saleId: 5, transactionId: 'in_retry' });
  });

  it.each([
    [400, platformError(ERRORS.saleAmount)],
    [401, platformError(ERRORS.authInvalidToken)],
    [403, platformError(ERRORS.programIdMismatch)],
    [404, platformError(ERRORS.refundNotFound)],
    [410, typedError(ERRORS.clickLinkDisabled)],
    [422, platformError(ERRORS.saleCurrency, { currency: 'GBP' })],
  ])('never retries a %i', async (status, body) => {
    server = await startScriptedServer([{ status, body }, SALE_OK]);
    await expect(client(server.url).trackSale(SALE)).rejects.toMatchObject({ status });
    expect(server.received).toHaveLength(1);
  });

  it('does not retry "Failed to create commission": the sale is stored and a retry would hide the missing commission', async () => {
    server = await startScriptedServer([{ status: 500, body: platformError(ERRORS.saleCommissionFailed) }, SALE_OK]);
    const error = await client(server.url).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toBe(ERRORS.saleCommissionFailed.message);
    expect(server.received).toHaveLength(1);
  });

  it('retries a timeout, then throws ConnectionError once retries run out', async () => {
    server = await startScriptedServer([{ status: 200, hang: true }]);
    const started = Date.now();
    const error = await client(server.url, { timeoutMs: 200, maxRetries: 1 }).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ timedOut: true, status: null, attempts: 2 });
    expect(server.received).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('retries a refused connection', async () => {
    server = await startScriptedServer([SALE_OK]);
    const deadUrl = server.url;
    await server.close();
    server = undefined;
    const error = await client(deadUrl, { maxRetries: 1 }).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error).toMatchObject({ timedOut: false, attempts: 2 });
  });

  it('stops after maxRetries and throws the last error with its attempts', async () => {
    server = await startScriptedServer([{ status: 503, body: platformError(ERRORS.serviceUnavailable) }]);
    const error = await client(server.url, { maxRetries: 2 }).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toMatchObject({ status: 503, attempts: 3, requestId: 'req_3' });
    expect(server.received).toHaveLength(3);
  });

  it('makes one attempt with maxRetries 0, also per call', async () => {
    server = await startScriptedServer([{ status: 500, body: platformError(ERRORS.saleFailed) }, SALE_OK]);
    await expect(client(server.url).trackSale(SALE, { maxRetries: 0 })).rejects.toBeInstanceOf(APIError);
    expect(server.received).toHaveLength(1);
  });

  it('throws RateLimitError with retryAfterSeconds when the wait is longer than it will sleep', async () => {
    server = await startScriptedServer([{ status: 429, body: typedError(ERRORS.rateLimited, { seconds: 120 }, { status: 429, retry_after_seconds: 120 }), headers: { 'retry-after': '120' } }]);
    const error = await client(server.url).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ retryAfterSeconds: 120, code: 'rate_limited', attempts: 1 });
    expect(server.received).toHaveLength(1);
  });

  it('treats "already a lead" after a retried 500 as the first attempt\'s success', async () => {
    server = await startScriptedServer([
      { status: 500, body: platformError(ERRORS.leadFailed) },
      { status: 400, body: platformError(ERRORS.leadStatus, { status: 'lead' }) },
    ]);
    const result = await client(server.url).trackLead({ clickId: 'clk_1', customerExternalId: 'u' });
    expect(result).toMatchObject({ alreadyLead: true, status: 'lead' });
    expect(server.received.map((r) => r.url)).toEqual([ROUTES.trackLead.path, ROUTES.trackLead.path]);
  });

  it('throws InvalidRequestError for a 400 without retrying it', async () => {
    server = await startScriptedServer([{ status: 400, body: platformError(ERRORS.saleCustomerNotFound) }]);
    const error = await client(server.url).trackSale(SALE).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ code: 'no_attribution', attempts: 1 });
  });
});
