/** One structured log line per request: method, route path, status, duration and request id — never headers or bodies. */
import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';
import type { RequestState } from './state.js';

export function accessLog(logger: Logger) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        logger.info({ requestId: (ctx.state as RequestState).requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
      }
    }
  };
}
