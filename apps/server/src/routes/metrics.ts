import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { AppDeps } from '../deps.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * GET /metrics — the Prometheus exposition, for a scraper that sends `Authorization: Bearer
 * METRICS_TOKEN`. Without METRICS_TOKEN, or with another token, the path does not exist (404 in
 * the JSON envelope): the metrics name routes and volumes, nothing for the public.
 */
export function metricsEndpoint(deps: AppDeps) {
  const expected = deps.config.metricsToken ? digest(deps.config.metricsToken) : undefined;
  return async function handleMetrics(ctx: Context): Promise<void> {
    const header = ctx.get('authorization');
    const token = /^Bearer (.+)$/i.exec(header)?.[1];
    if (!expected || !token || !timingSafeEqual(digest(token), expected)) throw new ApiError(ERRORS.routeNotFound);
    const { registry } = deps.ops.metrics;
    ctx.set('Cache-Control', 'no-store');
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
