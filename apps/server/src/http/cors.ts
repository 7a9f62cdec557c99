/** CORS: open without credentials on the routes the browser tracker calls; closed elsewhere (no headers). */
import type { Context } from 'koa';

/** The headers of an open route's answers, in order. */
export const OPEN_CORS_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', 'X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After'],
];

/** Any origin may call the route and read the headers a client needs. */
export function allowAnyOrigin(ctx: Context): void {
  for (const [name, value] of OPEN_CORS_HEADERS) ctx.set(name, value);
}

/** The answer to a browser's preflight of an open route. */
export function openCorsPreflight(ctx: Context): void {
  allowAnyOrigin(ctx);
  ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization');
  ctx.set('Access-Control-Max-Age', '86400');
  ctx.status = 204;
}
