/** GET /api/v1/cli/status (program key): the program, its key state and readiness (4.7). */
import type { Context } from 'koa';
import type { CliStatusResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, keyState, KEY_ERRORS } from '../../auth/program-key.js';
import { readProgram } from '../../db/programs.js';
import { computeReadiness } from '../../domain/readiness.js';

export function cliStatus(deps: AppDeps) {
  return async function handleStatus(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.cli, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const now = deps.now();
    const program = (await readProgram(deps.db, key.programId))!;
    ctx.body = {
      success: true,
      data: {
        program,
        key: { state: keyState(key, now) === 'active' ? 'active' : 'marked', rotate_by: key.rotationDeadline === null ? null : new Date(key.rotationDeadline).toISOString() },
        readiness: await computeReadiness(deps.db, key, now),
      },
    } satisfies CliStatusResponse;
  };
}
