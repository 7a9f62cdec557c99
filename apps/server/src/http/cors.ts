/** CORS: open without credentials on the routes the browser tracker calls; closed elsewhere (no headers). */
import type { Context } from 'koa';

const EXPOSED = 'X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

/** Any origin may call the route and read the headers a client needs. */
export function allowAnyOrigin(ctx: Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', EXPOSED);
}

/** The answer to a browser's preflight of an open route. */
export function openCorsPreflight(ctx: Context): void {
  allowAnyOrigin(ctx);
  ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization');
  ctx.set('Access-Control-Max-Age', '86400');
  ctx.status = 204;
}
