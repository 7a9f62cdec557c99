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

export interface EnvelopeOptions {
  logger: Logger;
  publicBaseUrl: string;
  now: () => number;
}

export function requestEnvelope({ logger, publicBaseUrl, now }: EnvelopeOptions) {
  return async function handleRequest(ctx: Context, next: Next): Promise<void> {
    const logging = logger.isLevelEnabled('info');
    const started = logging ? performance.now() : 0;
    assignRequestId(ctx);
    try {
      await next();
      renderUnanswered(ctx);
    } catch (err) {
      renderFailure(ctx, err, logger);
    }
    addRotationWarning(ctx, publicBaseUrl, now);
    dropOmittedRequestId(ctx);
    await drainUnreadBody(ctx);
    if (logging) logRequest(logger, ctx, started);
  };
}
