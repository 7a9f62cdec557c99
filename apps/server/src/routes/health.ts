import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import { migrationStatus } from '../db/migrate.js';

/** GET /healthz — liveness: 200 when the database answers. */
export function health(deps: AppDeps) {
  return async function handleHealth(ctx: Context): Promise<void> {
    try {
      await deps.db.raw('select 1');
    } catch (err) {
      // Logged once per change of state (ops/service-state.ts), not once per probe.
      deps.ops.state.databaseFailed(err);
      throw new ApiError(ERRORS.serviceUnavailable);
    }
    deps.ops.state.databaseAnswered();
    ctx.body = { status: 'ok' };
  };
}

/** How long a readiness probe waits for the database before calling it unreachable. */
const PROBE_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work, new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]).finally(() => clearTimeout(timer));
}

/**
 * GET /readyz — readiness, for load balancers and orchestrators (docs/operator.md): 503 with the
 * reasons while draining, while the database is unreachable, or while this release's migrations
 * are not all applied; 200 otherwise, naming what runs degraded (Redis unreachable: rate limits
 * are per process). Not rate limited: probes come often and from the balancer's address.
 */
export function readiness(deps: AppDeps) {
  const schema = deps.config.database.client === 'postgres' ? deps.config.database.schema : undefined;
  return async function handleReadyz(ctx: Context): Promise<void> {
    const reasons: string[] = [];
    const degraded: string[] = [];
    const { state } = deps.ops;
    if (state.draining) reasons.push('draining: the process is shutting down');
    try {
      await withTimeout(deps.db.raw('select 1'), PROBE_TIMEOUT_MS);
      state.databaseAnswered();
      // One small read per probe (a few dozen names): a schema rolled back under a running release shows at once.
      const { pending } = await withTimeout(migrationStatus(deps.db, schema), PROBE_TIMEOUT_MS);
      if (pending.length > 0) reasons.push(`migrations pending: ${pending.length} (run reftrack-server migrate)`);
    } catch (err) {
      state.databaseFailed(err);
      reasons.push('database unreachable');
    }
    if (state.redisUp === false) degraded.push('redis unreachable: rate limits are per process');
    ctx.set('Cache-Control', 'no-store');
    ctx.status = reasons.length > 0 ? 503 : 200;
    ctx.body = { status: reasons.length > 0 ? 'not_ready' : 'ready', reasons, degraded };
  };
}
