/** GET/POST /api/portal/partners/:id/link-requests — a partner asks for another referral link (docs/partners.md, "Link requests"). */
import type { Context } from 'koa';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { ownPartner } from '../../auth/portal-partner.js';
import { listLinkRequests, requestLink } from '../../domain/link-requests.js';

export function portalListLinkRequests(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    ctx.body = { success: true, data: await listLinkRequests(deps.db, { partnerId }) };
  };
}

export function portalRequestLink(deps: AppDeps) {
  return async function handleRequest(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    const body = readBody(ctx);
    const request = await deps.atomic((trx) => requestLink(trx, partnerId, body, deps.now()));
    ctx.status = 201;
    ctx.body = { success: true, data: request };
  };
}
