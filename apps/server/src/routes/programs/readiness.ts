/** GET /api/v1/programs/me/readiness — spec 4.5, typed errors; the checklist is domain/readiness.ts. */
import type { Context } from 'koa';
import type { ReadinessResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { computeReadiness } from '../../domain/readiness.js';

export function readiness(deps: AppDeps) {
  return async function handleReadiness(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.readiness, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    ctx.body = { success: true, data: await computeReadiness(deps.db, key, deps.now()) } satisfies ReadinessResponse;
  };
}
