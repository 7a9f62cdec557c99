/** CORS: open without credentials on the routes the browser tracker calls; closed elsewhere (no headers). */
import type { Context, Next } from 'koa';

export async function openCors(ctx: Context, next: Next): Promise<void> {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', 'X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After');
  if (ctx.method === 'OPTIONS') {
    ctx.set('Access-Control-Allow-Methods', 'POST, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization');
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
    return;
  }
  await next();
}
