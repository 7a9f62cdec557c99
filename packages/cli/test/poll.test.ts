/** The login poll loop against a real HTTP server on 127.0.0.1 (no mocked fetch). */
import { ERRORS } from '@reftrack/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../src/cli-error.js';
import { clampInterval, loginDeadline, pollForLogin, type PollOptions } from '../src/commands/login/poll.js';
import { EXIT } from '../src/exit-codes.js';
import { createClient } from '../src/http/client.js';
import { platformError, startStub, type Stub, type StubHandler } from './helpers/stub-server.js';

const POLL = 'GET /api/v1/cli/auth/poll';
const pending = { status: 200, body: { success: true, data: { status: 'pending', expires_at: new Date(Date.now() + 60_000).toISOString() } } };
const complete = { status: 200, body: { success: true, data: { status: 'complete', token: 'login_tok', account: { email: 'owner@acme.test', name: 'Ada Owner' } } } };
const expired = { status: 200, body: { success: true, data: { status: 'expired' } } };

let stub: Stub | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

async function poll(handler: StubHandler, options: Partial<PollOptions> = {}) {
  stub = await startStub({ [POLL]: handler });
  const retries: Array<{ code: string; waitMs: number }> = [];
  const started = Date.now();
  const promise = pollForLogin({
    client: createClient({ baseUrl: stub.baseUrl }),
    state: 'st_123',
    deadline: Date.now() + 10_000,
    intervalMs: 100,
    onRetry: ({ error, waitMs }) => retries.push({ code: error.code, waitMs }),
    ...options,
  });
  return { promise, retries, started, requests: stub.requests };
}

async function rejection(promise: Promise<unknown>): Promise<CliError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the poll to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CliError);
  return err as CliError;
}

describe('login poll loop', () => {
  it('polls pending, pending, complete at the server interval and returns the token', async () => {
    const { promise, requests, started } = await poll((_req, n) => (n < 2 ? pending : complete));
    await expect(promise).resolves.toEqual({ token: 'login_tok', account: { email: 'owner@acme.test', name: 'Ada Owner' } });
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.query.get('state') === 'st_123')).toBe(true);
    // Two waits of one interval each: not a busy loop.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('stops with login_expired (exit 1) when the server says expired', async () => {
    const { promise, requests } = await poll((_req, n) => (n < 1 ? pending : expired));
    const err = await rejection(promise);
    expect(err.code).toBe('login_expired');
    expect(err.exitCode).toBe(EXIT.failure);
    expect(err.hint).toMatch(/reftrack login/);
    expect(requests).toHaveLength(2);
  });

  it('waits Retry-After on 429, then completes', async () => {
    const { promise, retries, started } = await poll((_req, n) =>
      n === 0 ? { status: 429, headers: { 'Retry-After': '1' }, body: { error: { status: 429, code: 'rate_limited', message: 'Too many requests. Retry after 1 seconds.', retry_after_seconds: 1 } } } : complete,
    );
    await expect(promise).resolves.toMatchObject({ token: 'login_tok' });
    expect(retries).toEqual([{ code: 'rate_limited', waitMs: 1000 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('backs off on 5xx and bodies that are not JSON, then completes', async () => {
    const { promise, retries } = await poll((_req, n) => (n === 0 ? { status: 503, body: 'upstream down' } : n === 1 ? { status: 500, body: platformError(500, 'InternalServerError', 'Failed to poll auth session (request_id: r1)', { request_id: 'r1' }) } : complete));
    await expect(promise).resolves.toMatchObject({ token: 'login_tok' });
    expect(retries.map((r) => r.code)).toEqual(['internal_error', 'internal_error']);
    // Exponential: each failure waits longer than the one before.
    expect(retries[1]!.waitMs).toBeGreaterThan(retries[0]!.waitMs);
  });

  it('backs off when a request times out, then completes', async () => {
    const { promise, retries } = await poll((_req, n) => (n === 0 ? { ...pending, delayMs: 1_500 } : complete), { requestTimeoutMs: 300 });
    await expect(promise).resolves.toMatchObject({ token: 'login_tok' });
    expect(retries[0]!.code).toBe('timeout');
  });

  it('fails at once on "Session already consumed" (400): the token went to someone else', async () => {
    const { promise, requests } = await poll(() => ({ status: 400, body: platformError(400, 'BadRequestError', ERRORS.cliPollConsumed.message) }));
    const err = await rejection(promise);
    expect(err.status).toBe(400);
    expect(err.message).toBe(ERRORS.cliPollConsumed.message);
    expect(err.hint).toMatch(/login` again/);
    expect(requests).toHaveLength(1);
  });

  it('fails at once on "Session not found" (404)', async () => {
    const { promise } = await poll(() => ({ status: 404, body: platformError(404, 'NotFoundError', ERRORS.cliPollNotFound.message) }));
    expect((await rejection(promise)).message).toBe(ERRORS.cliPollNotFound.message);
  });

  it('gives up at the deadline even if the server keeps saying pending, after one last poll', async () => {
    const { promise, requests, started } = await poll(() => pending, { deadline: Date.now() + 400, intervalMs: 100 });
    const err = await rejection(promise);
    expect(err.code).toBe('login_expired');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(3_000);
    expect(requests.length).toBeGreaterThanOrEqual(3);
  });

  it('rejects a complete answer without a token', async () => {
    const { promise } = await poll(() => ({ status: 200, body: { success: true, data: { status: 'complete', account: { email: 'a@b.c', name: null } } } }));
    const err = await rejection(promise);
    expect(err.code).toBe('invalid_response');
    expect(err.message).toContain('body.data.token');
  });
});

describe('poll timing inputs', () => {
  it('keeps the interval within bounds', () => {
    expect(clampInterval(0)).toBe(100);
    expect(clampInterval(2)).toBe(2_000);
    expect(clampInterval(3_600)).toBe(30_000);
  });

  it('corrects the deadline for clock skew with the server Date header', () => {
    const now = Date.UTC(2030, 0, 1, 12, 0, 0);
    // The server clock is 60 s ahead; its session ends 300 s after its own now.
    const serverNow = new Date(now + 60_000);
    const expiresAt = new Date(serverNow.getTime() + 300_000).toISOString();
    expect(loginDeadline(expiresAt, serverNow.toUTCString(), now)).toBe(now + 300_000);
    expect(loginDeadline(expiresAt, null, now)).toBe(now + 360_000);
  });

  it('falls back to the 5-minute session life for an absurd expires_at', () => {
    const now = Date.UTC(2030, 0, 1);
    expect(loginDeadline('2020-01-01T00:00:00Z', null, now)).toBe(now + 300_000);
    expect(loginDeadline('garbage', null, now)).toBe(now + 300_000);
  });
});
