/**
 * /api/dashboard/programs/:id/applications and /api/dashboard/applications/:id/(approve|decline):
 * the owner's side of applications (docs/partners.md, "Applications").
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { isUniqueViolation } from '../../db/knex.js';
import { approveApplication, declineApplication, listApplications } from '../../domain/applications.js';
import { decisionStatusFilter, parseDecline } from '../../domain/decision-input.js';

export function listApplicationsRoute(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    const status = decisionStatusFilter(ctx.query.status);
    ctx.body = { success: true, data: await listApplications(deps.db, programId, workspaceId, { status }) };
  };
}

/** The application's program, when the caller may manage its partners: 404 for any other. */
async function applicationProgram(deps: AppDeps, ctx: Context): Promise<{ applicationId: number; program: { id: number; workspaceId: number; name: string } }> {
  const applicationId = parseId(ctx.params.id, ERRORS.applicationNotFound);
  const row = await deps.db('partner_applications as a').join('programs as p', 'p.id', 'a.program_id').where('a.id', applicationId).first('p.id', 'p.name');
  if (!row) fail(ERRORS.applicationNotFound);
  const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, Number(row.id), 'partners:write').catch((err) => {
    if (err?.status === 404) fail(ERRORS.applicationNotFound);
    throw err;
  });
  return { applicationId, program: { id: Number(row.id), workspaceId, name: String(row.name) } };
}

export function approveApplicationRoute(deps: AppDeps) {
  return async function handleApprove(ctx: Context): Promise<void> {
    const { applicationId, program } = await applicationProgram(deps, ctx);
    const now = deps.now();
    let result;
    try {
      result = await deps.atomic((trx) => approveApplication(trx, deps, program, applicationId, requestActor(ctx), now));
    } catch (err) {
      // Two approvals racing for the same free code: the loser changes nothing and may retry.
      if (isUniqueViolation(err)) fail(ERRORS.shortLinkTaken);
      throw err;
    }
    deps.links.invalidate(result.link.short_link);
    const [application] = await listApplications(deps.db, program.id, program.workspaceId, { id: applicationId });
    ctx.body = { success: true, data: { application, partner_id: result.partnerId, link: result.link, invitation_id: result.invitationId } };
  };
}

export function declineApplicationRoute(deps: AppDeps) {
  return async function handleDecline(ctx: Context): Promise<void> {
    const { applicationId, program } = await applicationProgram(deps, ctx);
    const { reason, notify } = parseDecline(readBody(ctx));
    await deps.atomic((trx) => declineApplication(trx, deps, program, applicationId, reason, notify, requestActor(ctx), deps.now()));
    const [application] = await listApplications(deps.db, program.id, program.workspaceId, { id: applicationId });
    ctx.body = { success: true, data: { application } };
  };
}
