/** GET /api/agent/v1/programs/:id/stats — the program's stats for agent keys with `programs:read` (docs/agent-api.md). */
import type { Context } from 'koa';
import type { StatsResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { parseId, programInWorkspace } from '../../auth/workspace-access.js';
import { parseStatsQuery } from '../../domain/stats-query.js';
import { statsReport } from '../../domain/stats.js';

export function agentStats(deps: AppDeps) {
  return async function handleStats(ctx: Context): Promise<void> {
    // Another workspace's program answers 404, like a missing one.
    const programId = await programInWorkspace(deps.db, parseId(ctx.params.id), ctx.state.agent!.workspaceId);
    const query = parseStatsQuery(ctx.query, deps.now());
    ctx.body = { success: true, data: await statsReport(deps.db, programId, query) } satisfies StatsResponse;
  };
}
