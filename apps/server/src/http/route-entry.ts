/**
 * The first layer of every API route, in one function: the route's facts for the error renderer,
 * open CORS where the browser tracker calls, the rate limit (part 8: refused before anything
 * else runs, so nothing is recorded) and the JSON body. One layer rather than four, because each
 * Koa layer costs an async frame on every request of the hot routes.
 */
import type { Context, Middleware, Next } from 'koa';
import { LIMITS, type RateBucket } from '@reftrack/contract';
import type { RequestState } from './state.js';
import { allowAnyOrigin } from './cors.js';
import { consumeRate, type RateLimiters, type RateSubject } from './rate-limit.js';
import { readJsonBody } from './json-body.js';
import { handoffOf } from './lane-handoff.js';

export type EntryOptions = Partial<RequestState> &
  Required<Pick<RequestState, 'failure'>> & {
    /** The part 8 bucket the route spends from; none for routes without a limit. */
    bucket?: RateBucket;
    /** For a per-key bucket: the verified credential the point is charged to (else the client address). */
    rateSubject?: RateSubject;
    /** Any origin may call it (the tracker's routes). */
    cors?: boolean;
    /** Largest JSON body in bytes (413 beyond it). */
    bodyLimit?: number;
    /** false: keep the raw body only (`state.rawBody`), for a route that parses it itself, at most once. */
    parseBody?: boolean;
  };

export function routeEntry(limiters: RateLimiters, options: EntryOptions): Middleware {
  const { bucket, rateSubject, cors = false, bodyLimit = LIMITS.maxJsonBodyBytes, parseBody = true, ...meta } = options;
  return async function enterRoute(ctx: Context, next: Next): Promise<void> {
    Object.assign(ctx.state as RequestState, meta);
    if (cors) allowAnyOrigin(ctx);
    // A request the click lane handed over has spent its point and may have been read already.
    const handoff = handoffOf(ctx.req);
    if (bucket) await consumeRate(limiters, bucket, ctx, rateSubject, handoff?.rate);
    if (handoff?.failure) throw handoff.failure.error;
    await readJsonBody(ctx, bodyLimit, handoff?.raw, parseBody);
    await next();
  };
}
