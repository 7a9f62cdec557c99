/** One structured log line per request: method, route path, status, duration and request id — never headers or bodies. */
import type { Context } from 'koa';
import type { Logger } from '../logger.js';
import type { RequestState } from './state.js';

/** `started` is the request's performance.now() at arrival. */
export function logRequest(logger: Logger, ctx: Context, started: number): void {
  logger.info({ requestId: (ctx.state as RequestState).requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
}
