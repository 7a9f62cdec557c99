/**
 * POST /api/v1/cli/test-event (program key), spec 4.7: one test event of a kind, or a synthetic
 * chain; the rules are domain/synthetic-chain.ts.
 */
import type { Context } from 'koa';
import { ERRORS, HEADERS, TEST_EVENT_TYPES, type CliChainResponse, type CliTestEventResponse } from '@reftrack/contract';
import { ApiError, fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import type { RequestState } from '../../http/state.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { recordTestEvent, runSyntheticChain, type TestEventType } from '../../domain/synthetic-chain.js';

export function cliTestEvent(deps: AppDeps) {
  return async function handleTestEvent(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.cli, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const body = readBody(ctx);
    if (body.type === 'chain' || body.event_type === 'chain') {
      (ctx.state as RequestState).failure = ERRORS.cliChainFailed;
      try {
        ctx.body = { success: true, data: await runSyntheticChain(deps, key.programId, { ip: ctx.ip, headers: ctx.req.headers }) } satisfies CliChainResponse;
      } catch (err) {
        if (err instanceof ApiError && err.extra.retry_after_seconds !== undefined) ctx.set(HEADERS.retryAfter, String(err.extra.retry_after_seconds));
        throw err;
      }
      return;
    }
    const type = body.event_type;
    if (typeof type !== 'string' || !(TEST_EVENT_TYPES as readonly string[]).includes(type)) fail(ERRORS.cliTestEventType, { value: typeof type === 'string' ? type : String(type) });
    ctx.body = { success: true, data: await recordTestEvent(deps, key.programId, type as TestEventType) } satisfies CliTestEventResponse;
  };
}
