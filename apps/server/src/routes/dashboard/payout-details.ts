/** /api/dashboard/partners/:id/payout-details — where a partner is paid (encrypted at rest; docs/commissions.md). */
import type { Context } from 'koa';
import { ERRORS, type PayoutDetailsView } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { parsePayoutDetails, savePayoutDetails, viewPayoutDetails } from '../../domain/payout-details.js';

/** The partner and a check that the caller may `permission` in its workspace; another workspace's partner answers 404. */
async function partnerFor(deps: AppDeps, ctx: Context, permission: 'commissions:read' | 'commissions:manage'): Promise<number> {
  const partnerId = parseId(ctx.params.id, ERRORS.partnerNotFound);
  const partner = await deps.db('partners').where({ id: partnerId }).first('workspace_id');
  await workspaceWithRole(deps.db, ctx.state.account!.accountId, partner?.workspace_id ?? undefined, permission, ERRORS.partnerNotFound);
  return partnerId;
}

export function getPayoutDetails(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    const partnerId = await partnerFor(deps, ctx, 'commissions:read');
    ctx.body = { success: true, data: (await viewPayoutDetails(deps.db, deps.secrets, partnerId)) satisfies PayoutDetailsView | null };
  };
}

export function putPayoutDetails(deps: AppDeps) {
  return async function handlePut(ctx: Context): Promise<void> {
    const partnerId = await partnerFor(deps, ctx, 'commissions:manage');
    const details = parsePayoutDetails(readBody(ctx));
    ctx.body = { success: true, data: await savePayoutDetails(deps.db, deps.secrets, partnerId, details, deps.now()) };
  };
}
