import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { AppDeps } from '../deps.js';

/** GET /healthz — 200 when the database answers. */
export function health(deps: AppDeps) {
  return async function handleHealth(ctx: Context): Promise<void> {
    try {
      await deps.db.raw('select 1');
    } catch (err) {
      deps.logger.warn({ err }, 'health check: database unreachable');
      throw new ApiError(ERRORS.serviceUnavailable);
    }
    ctx.body = { status: 'ok' };
  };
}
