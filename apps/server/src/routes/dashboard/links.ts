/** Referral links (2.3, 3.3): create, list with clicks and last click, switch on and off. */
import type { Context } from 'koa';
import { ERRORS, IDENTIFIER_PATTERN, type DashboardLink } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { requestActor } from '../../auth/actor.js';
import { appendEvents } from '../../db/outbox.js';
import { createReferralLink, linkQuery, linkView } from '../../domain/links.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { isUniqueViolation } from '../../db/knex.js';

export function listLinks(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    const rows = await linkQuery(deps.db).where({ 'l.program_id': programId, 'l.is_test': false }).orderBy('l.id');
    ctx.body = { success: true, data: rows.map((row) => linkView(deps, row)) };
  };
}

export function createLink(deps: AppDeps) {
  return async function handleCreate(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:write');
    const body = readBody(ctx);
    const shortLink = str(body.short_link);
    if (!shortLink || body.partner_id === undefined) fail(ERRORS.linkFieldsMissing);
    if (!IDENTIFIER_PATTERN.test(shortLink)) fail(ERRORS.shortLinkInvalid);
    const partnerId = parseId(body.partner_id, ERRORS.partnerNotFound);
    const partner = await deps.db('partners').where({ id: partnerId, workspace_id: workspaceId }).first('id');
    if (!partner) fail(ERRORS.partnerNotFound);
    const now = deps.now();
    const actor = requestActor(ctx);
    let link: DashboardLink;
    try {
      link = await deps.atomic((trx) => createReferralLink(trx, deps, { shortLink, partnerId, programId, active: body.active !== false }, actor, now));
    } catch (err) {
      if (isUniqueViolation(err)) fail(ERRORS.shortLinkTaken);
      throw err;
    }
    deps.links.invalidate(shortLink);
    ctx.status = 201;
    ctx.body = { success: true, data: link };
  };
}

/** PATCH /api/dashboard/links/:id {active} — the switch of 3.3. */
export function updateLink(deps: AppDeps) {
  return async function handleUpdate(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id, ERRORS.linkNotFound);
    const link = await deps.db('referral_links').where({ id }).first('id', 'program_id', 'short_link');
    if (!link || link.program_id == null) fail(ERRORS.linkNotFound);
    await programWithRole(deps.db, ctx.state.account!.accountId, link.program_id, 'partners:write').catch((err) => {
      // A link of a program the caller cannot see does not exist for them either.
      if (err?.status === 404) fail(ERRORS.linkNotFound);
      throw err;
    });
    const body = readBody(ctx);
    if (typeof body.active !== 'boolean') fail(ERRORS.activeInvalid);
    const active = body.active;
    const now = deps.now();
    const actor = requestActor(ctx);
    const view = await deps.atomic(async (trx) => {
      const changed = await trx('referral_links').where({ id }).whereNot({ active }).update({ active });
      const updated = linkView(deps, await linkQuery(trx).where('l.id', id).first());
      if (changed > 0) await appendEvents(trx, [{ type: 'link.updated', programId: Number(link.program_id), data: { link: updated, changed: ['active'] }, occurredAt: now, actor }]);
      return updated;
    });
    deps.links.invalidate(link.short_link);
    ctx.body = { success: true, data: view };
  };
}
