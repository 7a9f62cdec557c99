/**
 * /api/dashboard/programs/:id/link-requests and /api/dashboard/link-requests/:id/(approve|decline):
 * the owner's side of partners' link requests (docs/partners.md, "Link requests").
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { isUniqueViolation } from '../../db/knex.js';
import { approveLinkRequest, declineLinkRequest, listLinkRequests } from '../../domain/link-requests.js';
import { decisionStatusFilter, parseDecline } from '../../domain/decision-input.js';

export function listLinkRequestsRoute(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    const status = decisionStatusFilter(ctx.query.status);
    ctx.body = { success: true, data: await listLinkRequests(deps.db, { programId, status }) };
  };
}

/** The request's id and workspace, when the caller may manage its program's partners: 404 for any other. */
async function requestInReach(deps: AppDeps, ctx: Context): Promise<{ id: number; workspaceId: number }> {
  const id = parseId(ctx.params.id, ERRORS.linkRequestNotFound);
  const row = await deps.db('link_requests').where({ id }).first('program_id');
  if (!row) fail(ERRORS.linkRequestNotFound);
  const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, Number(row.program_id), 'partners:write').catch((err) => {
    if (err?.status === 404) fail(ERRORS.linkRequestNotFound);
    throw err;
  });
  return { id, workspaceId };
}

export function approveLinkRequestRoute(deps: AppDeps) {
  return async function handleApprove(ctx: Context): Promise<void> {
    const { id, workspaceId } = await requestInReach(deps, ctx);
    const body = readBody(ctx);
    let result;
    try {
      result = await deps.atomic((trx) => approveLinkRequest(trx, deps, id, workspaceId, body.short_link, requestActor(ctx), deps.now()));
    } catch (err) {
      if (isUniqueViolation(err)) fail(ERRORS.shortLinkTaken);
      throw err;
    }
    deps.links.invalidate(result.link.short_link);
    ctx.body = { success: true, data: result };
  };
}

export function declineLinkRequestRoute(deps: AppDeps) {
  return async function handleDecline(ctx: Context): Promise<void> {
    const { id, workspaceId } = await requestInReach(deps, ctx);
    const { reason } = parseDecline(readBody(ctx));
    ctx.body = { success: true, data: { request: await deps.atomic((trx) => declineLinkRequest(trx, deps, id, workspaceId, reason, requestActor(ctx), deps.now())) } };
  };
}
