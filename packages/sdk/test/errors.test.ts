import { afterEach, describe, expect, it } from 'vitest';
import { ERRORS, formatMessage } from '@reftrack/contract';
import {
  APIError,
  AuthenticationError,
  ConflictError,
  GoneError,
  InvalidRequestError,
  KeyRotationRequiredError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  Reftrack,
  ReftrackError,
} from '../src/index.js';
import { errorFromResponse, parseRetryAfter } from '../src/errors.js';
import { platformError, startScriptedServer, typedError, type ScriptedServer } from './helpers/scripted-server.js';

const BASE = 'https://reftrack.example';

describe('errorFromResponse picks the class from the status', () => {
  it.each([
    [400, platformError(ERRORS.saleAmount), InvalidRequestError],
    [401, platformError(ERRORS.authInvalidToken), AuthenticationError],
    [401, typedError(ERRORS.keyRotationRequired, { deadline: '2026-01-01T00:00:00Z' }), KeyRotationRequiredError],
    [403, platformError(ERRORS.programIdMismatch), PermissionError],
    [404, platformError(ERRORS.refundNotFound), NotFoundError],
    [409, platformError(ERRORS.saleDuplicate), ConflictError],
    [410, typedError(ERRORS.clickLinkDisabled), GoneError],
    [413, platformError(ERRORS.bodyTooLarge), InvalidRequestError],
    [422, platformError(ERRORS.saleCurrency, { currency: 'GBP' }), InvalidRequestError],
    [429, typedError(ERRORS.rateLimited, { seconds: 3 }), RateLimitError],
    [500, platformError(ERRORS.saleFailed), APIError],
    [502, 'Bad Gateway', APIError],
  ])('%i', (status, body, Kind) => {
    const error = errorFromResponse({ status, body, headers: {}, baseUrl: BASE });
    expect(error).toBeInstanceOf(Kind);
    expect(error).toBeInstanceOf(ReftrackError);
    expect(error.name).toBe(Kind.name);
    expect(error.status).toBe(status);
  });

  it('a retired key is also an AuthenticationError, so one catch handles both 401s', () => {
    const error = errorFromResponse({ status: 401, body: typedError(ERRORS.keyRotationRequired), headers: {}, baseUrl: BASE });
    expect(error).toBeInstanceOf(AuthenticationError);
  });
});

describe('fields', () => {
  it('reads the platform envelope: code, message, details, request id, derived docs URL', () => {
    const error = errorFromResponse({
      status: 409,
      body: platformError(ERRORS.saleDuplicate, {}, { sale_id: 12 }),
      headers: { 'x-request-id': 'req_abc' },
      baseUrl: BASE,
    });
    expect(error).toMatchObject({
      code: 'duplicate_transaction',
      message: ERRORS.saleDuplicate.message,
      details: { sale_id: 12 },
      requestId: 'req_abc',
      docsUrl: `${BASE}/docs/errors#duplicate_transaction`,
    });
  });

  it('leaves the code null for platform errors without one, and links the page without an anchor', () => {
    const error = errorFromResponse({ status: 400, body: platformError(ERRORS.leadIdRequired), headers: {}, baseUrl: BASE });
    expect(error.code).toBeNull();
    expect(error.docsUrl).toBe(`${BASE}/docs/errors`);
  });

  it('reads the typed envelope: extras become details, docs_url and hint are taken from the body', () => {
    const docs = 'https://docs.reftrack.example/docs/errors#api_key_rotation_required';
    const body = typedError(ERRORS.keyRotationRequired, { deadline: '2026-01-01T00:00:00.000Z' }, { hint: ERRORS.keyRotationRequired.hint, docs_url: docs });
    const error = errorFromResponse({ status: 401, body, headers: { sunset: 'Thu, 01 Jan 2026 00:00:00 GMT' }, baseUrl: BASE });
    expect(error).toBeInstanceOf(KeyRotationRequiredError);
    expect(error.message).toBe(formatMessage(ERRORS.keyRotationRequired.message, { deadline: '2026-01-01T00:00:00.000Z' }));
    expect(error.docsUrl).toBe(docs);
    expect(error.hint).toBe(ERRORS.keyRotationRequired.hint);
    expect(error.details).toEqual({ hint: ERRORS.keyRotationRequired.hint, docs_url: docs });
    expect((error as KeyRotationRequiredError).sunset).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
  });

  it('takes retryAfterSeconds from Retry-After, else from retry_after_seconds', () => {
    const limited = errorFromResponse({ status: 429, body: typedError(ERRORS.rateLimited, { seconds: 7 }, { status: 429, retry_after_seconds: 7 }), headers: { 'retry-after': '9' }, baseUrl: BASE });
    expect(limited.retryAfterSeconds).toBe(9);
    const readiness = errorFromResponse({ status: 500, body: typedError(ERRORS.readinessFailed, {}, { retry_after_seconds: 10 }), headers: {}, baseUrl: BASE });
    expect(readiness.retryAfterSeconds).toBe(10);
    expect(readiness.code).toBe('internal_error');
  });

  it('parses Retry-After as seconds or as an HTTP-date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
  });

  it('says what it got when the body is not JSON', () => {
    const error = errorFromResponse({ status: 502, body: '<html>Bad Gateway</html>', headers: {}, baseUrl: BASE });
    expect(error.message).toContain('HTTP 502');
    expect(error.raw).toBe('<html>Bad Gateway</html>');
  });
});

describe('over the wire', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('readiness 401 invalid_key arrives as AuthenticationError with the typed code', async () => {
    server = await startScriptedServer([{ status: 401, body: typedError(ERRORS.readinessInvalid) }]);
    const error = await new Reftrack({ apiKey: 'aff_wrong', baseUrl: server.url, onWarning: () => {} }).readiness().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'invalid_key', message: ERRORS.readinessInvalid.message, requestId: 'req_1', docsUrl: `${server.url}/docs/errors#invalid_key` });
  });

  it('a 2xx that is not JSON is an APIError, not a silent success', async () => {
    server = await startScriptedServer([{ status: 200, raw: 'ok' }]);
    await expect(new Reftrack({ apiKey: 'aff_x', baseUrl: server.url, maxRetries: 0 }).sendTestSale()).rejects.toBeInstanceOf(APIError);
  });
});

describe('an address that is not a Reftrack server', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('says so, naming baseUrl, when a web page answers 404', async () => {
    server = await startScriptedServer([{ status: 404, raw: '<!doctype html><title>Not found</title>', headers: { 'content-type': 'text/html; charset=utf-8' } }]);
    const error = await new Reftrack({ apiKey: 'aff_x', baseUrl: server.url, maxRetries: 0 }).trackSale({ invoiceId: 'in_1', amount: 100, customerExternalId: 'u' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as Error).message).toBe(`${server!.url} does not look like a Reftrack server: it answered HTTP 404 (text/html) without Reftrack's error envelope. Check baseUrl or REFTRACK_BASE_URL.`);
  });

  it('says so for a 200 that is not JSON', async () => {
    server = await startScriptedServer([{ status: 200, raw: '<!doctype html><title>Home</title>', headers: { 'content-type': 'text/html' } }]);
    const error = await new Reftrack({ apiKey: 'aff_x', baseUrl: server.url, maxRetries: 0 }).readiness().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/does not look like a Reftrack server: it answered HTTP 200 \(text\/html\)/);
  });

  it('blames a proxy, not the address, for a 5xx without the envelope', () => {
    const error = errorFromResponse({ status: 502, body: 'Bad Gateway', headers: { 'content-type': 'text/plain' }, baseUrl: BASE });
    expect(error.message).toBe(`Unexpected response from the Reftrack API (HTTP 502, text/plain, without Reftrack's error envelope: a proxy in front of ${BASE} may have answered)`);
  });
});
