import { describe, expect, it } from 'vitest';
import { ERRORS } from '@reftrack/contract';
import { ConnectionError, ReftrackError } from '../src/errors.js';
import { RETRY_DEFAULTS, backoffDelayMs, decideRetry } from '../src/retry-policy.js';

const status = (s: number, message = 'x', retryAfterSeconds: number | null = null) => new ReftrackError({ status: s, code: null, message, retryAfterSeconds });

describe('decideRetry', () => {
  it.each([400, 401, 403, 404, 409, 410, 413, 422])('never retries %i', (s) => {
    expect(decideRetry(status(s), 0, 5).retry).toBe(false);
  });

  it.each([408, 500, 502, 503, 504])('retries %i with backoff', (s) => {
    expect(decideRetry(status(s), 0, 5, () => 1)).toEqual({ retry: true, delayMs: RETRY_DEFAULTS.initialDelayMs, reason: `status ${s}` });
  });

  it('waits exactly Retry-After on a 429', () => {
    expect(decideRetry(status(429, 'x', 3), 0, 2)).toMatchObject({ retry: true, delayMs: 3000 });
  });

  it('gives up when Retry-After is longer than the cap', () => {
    expect(decideRetry(status(429, 'x', RETRY_DEFAULTS.maxRetryAfterSeconds + 1), 0, 2).retry).toBe(false);
  });

  it('retries connection errors and timeouts', () => {
    expect(decideRetry(new ConnectionError({ message: 'reset', timedOut: false }), 0, 1).retry).toBe(true);
    expect(decideRetry(new ConnectionError({ message: 'slow', timedOut: true }), 0, 1)).toMatchObject({ retry: true, reason: 'timeout' });
  });

  it('stops at maxRetries', () => {
    expect(decideRetry(status(500), 2, 2).retry).toBe(false);
    expect(decideRetry(new ConnectionError({ message: 'reset', timedOut: false }), 0, 0).retry).toBe(false);
  });

  it('does not retry a sale stored without its commission', () => {
    expect(decideRetry(status(500, ERRORS.saleCommissionFailed.message), 0, 2).retry).toBe(false);
  });
});

describe('backoffDelayMs', () => {
  it('doubles per retry, stays within [half, full] of the step, and is capped', () => {
    expect(backoffDelayMs(0, () => 0)).toBe(RETRY_DEFAULTS.initialDelayMs / 2);
    expect(backoffDelayMs(0, () => 1)).toBe(RETRY_DEFAULTS.initialDelayMs);
    expect(backoffDelayMs(1, () => 1)).toBe(RETRY_DEFAULTS.initialDelayMs * 2);
    expect(backoffDelayMs(30, () => 1)).toBe(RETRY_DEFAULTS.maxDelayMs);
    for (let i = 0; i < 50; i += 1) {
      const d = backoffDelayMs(2);
      expect(d).toBeGreaterThanOrEqual(RETRY_DEFAULTS.initialDelayMs * 2);
      expect(d).toBeLessThanOrEqual(RETRY_DEFAULTS.initialDelayMs * 4);
    }
  });
});
