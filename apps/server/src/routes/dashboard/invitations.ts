/** POST /api/dashboard/partners/:id/invitations — an owner invites a partner to the portal by e-mail (docs/partners.md). */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { requestActor } from '../../auth/actor.js';
import { invitePartner, normalizeEmail } from '../../domain/portal-access.js';

export function invitePartnerRoute(deps: AppDeps) {
  return async function handleInvite(ctx: Context): Promise<void> {
    const partnerId = parseId(ctx.params.id, ERRORS.partnerNotFound);
    const partner = await deps.db('partners as pa').leftJoin('workspaces as w', 'w.id', 'pa.workspace_id').where('pa.id', partnerId).first('pa.id', 'pa.name', 'pa.email', 'pa.workspace_id', 'w.name as workspace_name');
    const { workspaceId } = await workspaceWithRole(deps.db, ctx.state.account!.accountId, partner?.workspace_id ?? undefined, 'partners:write', ERRORS.partnerNotFound);
    const body = readBody(ctx);
    const given = body.email === undefined || body.email === null ? undefined : body.email;
    const email = normalizeEmail(given ?? partner.email);
    if (given !== undefined && !email) fail(ERRORS.partnerEmailInvalid);
    if (!email) fail(ERRORS.invitationEmailMissing);
    const now = deps.now();
    const actor = requestActor(ctx);
    const { invitationId, expiresAt } = await deps.atomic(async (trx) => {
      // The partner's address becomes the invited one, so the owner's list shows whom they invited.
      await trx('partners').where({ id: partnerId }).update({ email });
      return invitePartner(trx, { secrets: deps.secrets, publicBaseUrl: deps.config.publicBaseUrl }, { id: partnerId, name: partner.name, workspaceId, workspaceName: partner.workspace_name ?? '' }, email, actor, now);
    });
    ctx.status = 201;
    ctx.body = { success: true, data: { invitation_id: invitationId, partner_id: partnerId, email, expires_at: new Date(expiresAt).toISOString() } };
  };
}
