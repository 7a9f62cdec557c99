/** Referral links (2.3, 3.3): create, list with clicks and last click, switch on and off. */
import type { Context } from 'koa';
import { insertId } from '../../db/insert-id.js';
import { ERRORS, IDENTIFIER_PATTERN, type DashboardLink } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { bool, isUniqueViolation } from '../../db/knex.js';

function linkQuery(deps: AppDeps) {
  return deps.db('referral_links as l')
    .leftJoin('partners as pa', 'pa.id', 'l.partner_id')
    .leftJoin('programs as pr', 'pr.id', 'l.program_id')
    .select('l.id', 'l.short_link', 'l.partner_id', 'pa.code as partner_code', 'l.program_id', 'pr.domain', 'l.clicks', 'l.last_clicked', 'l.active', 'l.created_at');
}

function linkView(row: Record<string, unknown>): DashboardLink {
  return {
    id: Number(row.id),
    short_link: row.short_link as string,
    partner_id: row.partner_id == null ? null : Number(row.partner_id),
    partner_code: (row.partner_code as string | null) ?? null,
    program_id: row.program_id == null ? null : Number(row.program_id),
    url: row.domain ? `https://${row.domain}/?aff=${encodeURIComponent(String(row.short_link))}` : null,
    clicks: Number(row.clicks),
    last_clicked: row.last_clicked == null ? null : new Date(Number(row.last_clicked)).toISOString(),
    active: bool(row.active),
  };
}

export function listLinks(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    const rows = await linkQuery(deps).where({ 'l.program_id': programId, 'l.is_test': false }).orderBy('l.id');
    ctx.body = { success: true, data: rows.map(linkView) };
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
    let id: number;
    try {
      id = await deps.db.transaction(async (trx) => {
        // A link's partner is enrolled in its program, so the link's sales can be commissioned.
        await trx('partner_programs').insert({ partner_id: partnerId, program_id: programId, created_at: now }).onConflict(['partner_id', 'program_id']).ignore();
        return insertId(trx, 'referral_links', { short_link: shortLink, partner_id: partnerId, program_id: programId, active: body.active === false ? false : true, created_at: now });
      });
    } catch (err) {
      if (isUniqueViolation(err)) fail(ERRORS.shortLinkTaken);
      throw err;
    }
    deps.links.invalidate(shortLink);
    ctx.status = 201;
    ctx.body = { success: true, data: linkView(await linkQuery(deps).where('l.id', id).first()) };
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
    await deps.db('referral_links').where({ id }).update({ active: body.active });
    deps.links.invalidate(link.short_link);
    ctx.body = { success: true, data: linkView(await linkQuery(deps).where('l.id', id).first()) };
  };
}
