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
import { consumeRate, type RateLimiters } from './rate-limit.js';
import { readJsonBody } from './json-body.js';
import { handoffOf } from './lane-handoff.js';

export type EntryOptions = Partial<RequestState> &
  Required<Pick<RequestState, 'failure'>> & {
    /** The part 8 bucket the route spends from; none for routes without a limit. */
    bucket?: RateBucket;
    /** Any origin may call it (the tracker's routes). */
    cors?: boolean;
    /** Largest JSON body in bytes (413 beyond it). */
    bodyLimit?: number;
  };

export function routeEntry(limiters: RateLimiters, options: EntryOptions): Middleware {
  const { bucket, cors = false, bodyLimit = LIMITS.maxJsonBodyBytes, ...meta } = options;
  return async function enterRoute(ctx: Context, next: Next): Promise<void> {
    Object.assign(ctx.state as RequestState, meta);
    if (cors) allowAnyOrigin(ctx);
    // A request the click lane handed over has spent its point and may have been read already.
    const handoff = handoffOf(ctx.req);
    if (bucket) await consumeRate(limiters, bucket, ctx, handoff?.rate);
    if (handoff?.failure) throw handoff.failure.error;
    await readJsonBody(ctx, bodyLimit, handoff?.raw);
    await next();
  };
}
