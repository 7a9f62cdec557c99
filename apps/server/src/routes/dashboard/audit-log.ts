/**
 * GET /api/dashboard/workspaces/:id/audit-log — the workspace's audit log, newest first, for its
 * owners (`audit:read`): who did what, when, from which address (jobs/audit-log.ts).
 */
import type { Context } from 'koa';
import { ERRORS, LIMITS, type AuditLogResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { listAuditLog } from '../../jobs/audit-log.js';

function positive(value: unknown, fallback: number, max: number, error: typeof ERRORS.eventsPageInvalid): number {
  if (value === undefined) return fallback;
  const s = String(value);
  if (!/^\d{1,6}$/.test(s) || Number(s) < 1 || Number(s) > max) fail(error);
  return Number(s);
}

export function workspaceAuditLog(deps: AppDeps) {
  return async function handleAuditLog(ctx: Context): Promise<void> {
    const { workspaceId } = await workspaceWithRole(deps.db, ctx.state.account!.accountId, parseId(ctx.params.id, ERRORS.workspaceNotFound), 'audit:read');
    const page = positive(ctx.query.page, 1, 100_000, ERRORS.eventsPageInvalid);
    const pageSize = positive(ctx.query.pageSize, 50, LIMITS.eventListingMaxPageSize, ERRORS.eventsPageSizeInvalid);
    const { entries, total } = await listAuditLog(deps.db, workspaceId, page, pageSize);
    ctx.body = { success: true, data: entries, meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } } } satisfies AuditLogResponse;
  };
}
