/**
 * When a failed call is sent again. The rules follow spec 7.2 and 8: retry only where a repeat
 * cannot change what the server records.
 */
import { ERRORS } from '@reftrack/contract';
import { ConnectionError, type ReftrackError } from './errors.js';

export const RETRY_DEFAULTS = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  /** A server asking for a longer wait than this is answered with the error, not with a sleeping caller. */
  maxRetryAfterSeconds: 60,
} as const;

/**
 * 502/503/504 come from proxies and load balancers in front of the server as often as from the
 * server. 408 means the request did not reach the server in time (its headers took over 15 s), so
 * nothing ran: as safe to repeat as a connection error.
 */
const RETRYABLE_STATUSES = new Set([408, 429, 500, 502, 503, 504]);

export type RetryDecision = { retry: false; reason: string } | { retry: true; delayMs: number; reason: string };

/**
 * Exponential backoff capped at `maxDelayMs`, with jitter in [half, full] of the step so that many
 * clients failing together do not come back together.
 */
export function backoffDelayMs(retriesSoFar: number, random: () => number = Math.random): number {
  const step = Math.min(RETRY_DEFAULTS.initialDelayMs * 2 ** retriesSoFar, RETRY_DEFAULTS.maxDelayMs);
  return Math.round(step * (0.5 + random() / 2));
}

export function decideRetry(
  error: ReftrackError,
  retriesSoFar: number,
  maxRetries: number,
  random: () => number = Math.random,
): RetryDecision {
  if (retriesSoFar >= maxRetries) return { retry: false, reason: 'out of retries' };

  // No response: the request may never have reached the server (refused, reset, stale keep-alive
  // socket) or it may have been processed before the answer was lost. A repeat is still safe for
  // the keyed calls: a sale keeps its transaction_id (a recorded attempt answers 409, a duplicate
  // success), a repeated lead answers the "already a lead" 400, a refund names the same sale,
  // readiness only reads, and a second test sale is one more test event that never counts.
  // Clicks carry no idempotency key, which is why trackClick defaults to no retries.
  if (error instanceof ConnectionError) {
    return { retry: true, delayMs: backoffDelayMs(retriesSoFar, random), reason: error.timedOut ? 'timeout' : 'connection error' };
  }

  const status = error.status ?? 0;
  // 400/401/403/404/409/410/422 and anything unknown: the same request gets the same answer (7.2).
  if (!RETRYABLE_STATUSES.has(status)) return { retry: false, reason: `status ${status} is not retryable` };

  // The sale was written but its commission was not. Its transaction_id is consumed, so a retry
  // would answer 409 and report a duplicate success that hides the missing commission (7.5).
  if (error.message === ERRORS.saleCommissionFailed.message) return { retry: false, reason: 'sale stored without commission' };

  // 429 is refused before the endpoint runs, so nothing was recorded (8, rule 2); it must wait the
  // time the server names. A 5xx may name one too (readiness asks for 10 s).
  if (error.retryAfterSeconds !== null) {
    if (error.retryAfterSeconds > RETRY_DEFAULTS.maxRetryAfterSeconds) {
      return { retry: false, reason: `server asked to wait ${error.retryAfterSeconds} s` };
    }
    return { retry: true, delayMs: error.retryAfterSeconds * 1000, reason: `status ${status}, Retry-After` };
  }

  // A 5xx without a named wait: back off. A failed sale left nothing behind or is caught by its
  // transaction_id on the repeat; a failed lead answers "already a lead" on the repeat (7.4, 7.5).
  return { retry: true, delayMs: backoffDelayMs(retriesSoFar, random), reason: `status ${status}` };
}
