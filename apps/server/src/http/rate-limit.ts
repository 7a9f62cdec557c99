/**
 * Part 8 rate limits through rate-limiter-flexible: memory by default, Redis when REDIS_URL is set
 * (so several processes share one budget). Refuses before the endpoint runs, so nothing is recorded.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import { ERRORS, HEADERS, LIMITS, type RateBucket } from '@reftrack/contract';
import { ApiError } from './api-error.js';
import { bearerToken } from '../auth/bearer.js';

export type RateLimiters = Record<RateBucket, RateLimiterAbstract>;

export function createRateLimiters(redis?: Redis): RateLimiters {
  const make = (bucket: RateBucket): RateLimiterAbstract => {
    const { points, durationSeconds } = LIMITS.rate[bucket];
    const options = { points, duration: durationSeconds, keyPrefix: `reftrack:rl:${bucket}` };
    return redis ? new RateLimiterRedis({ ...options, storeClient: redis }) : new RateLimiterMemory(options);
  };
  const buckets = Object.keys(LIMITS.rate) as RateBucket[];
  return Object.fromEntries(buckets.map((b) => [b, make(b)])) as RateLimiters;
}

/**
 * Per-key buckets count by a hash of the presented token, so an invalid key never spends a valid
 * key's budget (and the token itself never reaches the limiter's store).
 */
function clientKey(ctx: Context, bucket: RateBucket): string {
  if (LIMITS.rate[bucket].per === 'key') {
    const token = bearerToken(ctx.get('authorization'));
    if (token) return 'k:' + createHash('sha256').update(token).digest('base64url').slice(0, 32);
  }
  return 'ip:' + ctx.ip;
}

function setHeaders(ctx: Context, limit: number, res: RateLimiterRes): void {
  ctx.set(HEADERS.rateLimitLimit, String(limit));
  ctx.set(HEADERS.rateLimitRemaining, String(Math.max(0, res.remainingPoints)));
  ctx.set(HEADERS.rateLimitReset, String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)));
}

/** Spends one point of the client's budget in `bucket`, or refuses with 429 before the endpoint runs (part 8). */
export async function consumeRate(limiters: RateLimiters, bucket: RateBucket, ctx: Context): Promise<void> {
  const limit = LIMITS.rate[bucket].points;
  let res: RateLimiterRes;
  try {
    res = await limiters[bucket].consume(clientKey(ctx, bucket));
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw new ApiError(ERRORS.serviceUnavailable);
    setHeaders(ctx, limit, rejection);
    const seconds = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
    ctx.set(HEADERS.retryAfter, String(seconds));
    throw new ApiError(ERRORS.rateLimited, { seconds }, {}, { status: 429, retry_after_seconds: seconds });
  }
  setHeaders(ctx, limit, res);
}
