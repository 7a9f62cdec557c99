/** GET /api/dashboard/programs/:id/stats — the program's stats from the rollups (docs/analytics.md). */
import type { Context } from 'koa';
import type { StatsResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { parseStatsQuery } from '../../domain/stats-query.js';
import { statsReport } from '../../domain/stats.js';

export function dashboardStats(deps: AppDeps) {
  return async function handleStats(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'tracking:list');
    const query = parseStatsQuery(ctx.query, deps.now());
    ctx.body = { success: true, data: await statsReport(deps.db, programId, query) } satisfies StatsResponse;
  };
}
