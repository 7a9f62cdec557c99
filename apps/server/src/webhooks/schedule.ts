/**
 * When a failed delivery is tried again (docs/webhooks.md, "Retries"): after 5 s, then twice as
 * long each time up to 6 h, each delay ±20% at random (so receivers that failed together are not
 * all retried in the same second), until 3 days after the event. About 22 attempts in all.
 */
import { WEBHOOK_LIMITS } from '@reftrack/contract';

/** The delay after failed attempt number `attempt` (1-based). */
export function retryDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(WEBHOOK_LIMITS.retryBaseDelayMs * 2 ** Math.min(attempt - 1, 30), WEBHOOK_LIMITS.retryMaxDelayMs);
  return Math.round(base * (0.8 + 0.4 * random()));
}

/**
 * The next attempt's time, or null when the delivery's retries are over (`retryUntil`: 3 days after
 * the event or a resend). The last retry falls at that end rather than being dropped when a full
 * delay would pass it.
 */
export function nextAttemptAt(retryUntil: number, attempt: number, now: number, random?: () => number): number | null {
  if (now >= retryUntil) return null;
  return Math.min(now + retryDelay(attempt, random), retryUntil);
}
