/**
 * The outermost middleware, one layer for what every request gets: its X-Request-ID (7.2), the
 * rendering of every error into its envelope (7.1), rotation warnings on answers to a marked key
 * (5.5), the access log line, and reading the rest of a body the route refused before reading it.
 * One layer rather than four: each Koa layer is an async frame on every request, and on the click
 * route they were a measurable share of the time.
 */
import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';
import { assignRequestId, dropOmittedRequestId } from './request-id.js';
import { renderFailure, renderUnanswered } from './error-renderer.js';
import { logRequest } from './access-log.js';
import { addRotationWarning } from '../auth/program-key.js';
import { drainUnreadBody } from './json-body.js';
import type { Metrics } from '../ops/metrics.js';
import type { ServiceState } from '../ops/service-state.js';
import { countingRoundTrips, countRoundTrips } from '../db/round-trips.js';

export interface EnvelopeOptions {
  logger: Logger;
  publicBaseUrl: string;
  now: () => number;
  /** Request metrics (per route pattern) and the database state for unreachable-database failures. */
  ops?: { metrics: Metrics; state: ServiceState };
}

export function requestEnvelope({ logger, publicBaseUrl, now, ops }: EnvelopeOptions) {
  return countingRoundTrips() ? countRoundTrips(logger, handleRequest) : handleRequest;
  async function handleRequest(ctx: Context, next: Next): Promise<void> {
    const logging = logger.isLevelEnabled('info');
    const started = logging || ops ? performance.now() : 0;
    assignRequestId(ctx);
    try {
      await next();
      renderUnanswered(ctx);
    } catch (err) {
      renderFailure(ctx, err, logger, ops?.state);
    }
    addRotationWarning(ctx, publicBaseUrl, now);
    dropOmittedRequestId(ctx);
    await drainUnreadBody(ctx);
    if (logging) logRequest(logger, ctx, started);
    // The route pattern (`/api/dashboard/programs/:id`), never the path: ids would make a series each.
    if (ops) ops.metrics.observeRequest(ctx.method, String((ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute ?? 'unmatched'), ctx.status, (performance.now() - started) / 1000);
  }
}
