/**
 * Part 8 rate limits through rate-limiter-flexible: memory by default (with the storage of
 * hashed-window-storage.ts, which keeps no object or timer per client), Redis when REDIS_URL is set (so
 * several processes share one budget). Refuses before the endpoint runs, so nothing is recorded.
 *
 * Spending a point and answering for it are two steps, because the click route's fast lane
 * (routes/track/click-lane.ts) spends the point outside Koa and may hand the answer back to Koa.
 */
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { ERRORS, HEADERS, LIMITS, type RateBucket } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { withHashedStorage } from './hashed-window-storage.js';

export type RateLimiters = Record<RateBucket, RateLimiterAbstract>;

/** What spending a point came to: allowed, refused (over the limit), or the store failed. */
export type RateOutcome = { allowed: RateLimiterRes } | { refused: RateLimiterRes } | { storeFailed: unknown };

/**
 * With Redis, each bucket has a per-process memory limiter as its insurance: while Redis cannot be
 * reached, points are spent there (`onFallback` counts them), so tracking goes on under a weaker
 * limit (each process counts on its own) instead of answering 503 (docs/operator.md).
 */
export function createRateLimiters(redis?: Redis, onFallback?: () => void): RateLimiters {
  const make = (bucket: RateBucket): RateLimiterAbstract => {
    const { points, durationSeconds } = LIMITS.rate[bucket];
    const options = { points, duration: durationSeconds, keyPrefix: `reftrack:rl:${bucket}` };
    const memory = withHashedStorage(new RateLimiterMemory(options));
    if (!redis) return memory;
    if (onFallback) {
      const consume = memory.consume.bind(memory);
      memory.consume = (...args: Parameters<typeof consume>) => {
        onFallback();
        return consume(...args);
      };
    }
    return new RateLimiterRedis({ ...options, storeClient: redis, insuranceLimiter: memory });
  };
  const buckets = Object.keys(LIMITS.rate) as RateBucket[];
  return Object.fromEntries(buckets.map((b) => [b, make(b)])) as RateLimiters;
}

/**
 * Who a request's point is charged to. A per-key bucket counts a credential only once it has
 * verified (`subject`: the stored credential's id, from rate-subject.ts), so a fresh junk token on
 * each request cannot open a fresh bucket each time; everything else, a wrong token included,
 * counts per client address. An invalid key therefore never spends a valid key's budget, and no
 * token reaches the limiter's store.
 */
export function rateKey(bucket: RateBucket, subject: string | undefined, ip: string): string {
  return LIMITS.rate[bucket].per !== 'ip' && subject ? 's:' + subject : 'ip:' + ip;
}

/** Resolves the verified credential (or other per-bucket subject) of a request; undefined: none. */
export type RateSubject = (ctx: Context) => Promise<string | undefined>;

/** Spends one point of `key`'s budget in `bucket`. */
export async function spendRate(limiters: RateLimiters, bucket: RateBucket, key: string): Promise<RateOutcome> {
  try {
    return { allowed: await limiters[bucket].consume(key) };
  } catch (rejection) {
    return rejection instanceof RateLimiterRes ? { refused: rejection } : { storeFailed: rejection };
  }
}

/**
 * The part 8 headers of an outcome, through `set` (Koa's ctx.set or a response's setHeader); a
 * refusal throws the 429, a failed store the 503, for the error renderer.
 */
export function answerRate(bucket: RateBucket, outcome: RateOutcome, set: (name: string, value: string) => void): void {
  if ('storeFailed' in outcome) throw new ApiError(ERRORS.serviceUnavailable);
  const res = 'allowed' in outcome ? outcome.allowed : outcome.refused;
  set(HEADERS.rateLimitLimit, String(LIMITS.rate[bucket].points));
  set(HEADERS.rateLimitRemaining, String(Math.max(0, res.remainingPoints)));
  set(HEADERS.rateLimitReset, String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
  if ('refused' in outcome) {
    const seconds = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    set(HEADERS.retryAfter, String(seconds));
    throw new ApiError(ERRORS.rateLimited, { seconds }, {}, { status: 429, retry_after_seconds: seconds });
  }
}

/**
 * Spends one point of the client's budget in `bucket` (or takes the outcome of a point already
 * spent for this request), and refuses with 429 before the endpoint runs (part 8).
 */
export async function consumeRate(limiters: RateLimiters, bucket: RateBucket, ctx: Context, subject?: RateSubject, spent?: RateOutcome): Promise<void> {
  const outcome = spent ?? (await spendRate(limiters, bucket, rateKey(bucket, subject ? await subject(ctx) : undefined, ctx.ip)));
  answerRate(bucket, outcome, (name, value) => ctx.set(name, value));
}
