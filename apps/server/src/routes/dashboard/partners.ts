/** /api/dashboard/programs/:id/partners — partners of a program's workspace and their enrollment (2.3 relations). */
import type { Context } from 'koa';
import { insertId } from '../../db/insert-id.js';
import { ERRORS, IDENTIFIER_PATTERN, INPUT_RULES, type DashboardPartner } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { requestActor } from '../../auth/actor.js';
import { enrollPartner } from '../../domain/partners.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { isUniqueViolation } from '../../db/knex.js';
import { readPartnerEarnings } from '../../db/commission-ledger.js';

const iso = (ms: unknown) => (ms == null ? null : new Date(Number(ms)).toISOString());

export function listPartners(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    const rows = await deps.db('partner_programs as pp')
      .join('partners as pa', 'pa.id', 'pp.partner_id')
      .where({ 'pp.program_id': programId, 'pa.is_test': false })
      .orderBy('pa.id')
      .select('pa.id', 'pa.name', 'pa.email', 'pa.code', 'pp.clicks', 'pp.leads', 'pp.sales', 'pp.revenue_cents', 'pp.last_clicked_at');
    const earnings = await readPartnerEarnings(deps.db, programId);
    ctx.body = {
      success: true,
      data: rows.map(
        (r): DashboardPartner => ({
          id: r.id, name: r.name, email: r.email, code: r.code, clicks: Number(r.clicks), leads: Number(r.leads), sales: Number(r.sales),
          revenue_cents: Number(r.revenue_cents), earnings: earnings.get(Number(r.id)) ?? [], last_clicked: iso(r.last_clicked_at),
        }),
      ),
    };
  };
}

/** Creates a partner in the program's workspace (or takes an existing one by id) and enrolls it. */
export function addPartner(deps: AppDeps) {
  return async function handleAdd(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:write');
    const body = readBody(ctx);
    const now = deps.now();
    let partnerId: number;
    if (body.partner_id !== undefined) {
      partnerId = parseId(body.partner_id, ERRORS.partnerNotFound);
      const partner = await deps.db('partners').where({ id: partnerId, workspace_id: workspaceId }).first('id');
      if (!partner) fail(ERRORS.partnerNotFound);
    } else {
      const name = str(body.name);
      const code = str(body.code);
      if (!name || !code) fail(ERRORS.partnerFieldsMissing);
      if (!IDENTIFIER_PATTERN.test(code)) fail(ERRORS.partnerCodeInvalid);
      const email = body.email === undefined || body.email === null ? null : str(body.email);
      if (email !== null && (!email || !INPUT_RULES.partnerEmail.test(email))) fail(ERRORS.partnerEmailInvalid);
      try {
        partnerId = await insertId(deps.db, 'partners', { name: name.slice(0, 200), email, code, workspace_id: workspaceId, created_at: now });
      } catch (err) {
        if (isUniqueViolation(err)) fail(ERRORS.partnerCodeTaken);
        throw err;
      }
    }
    const actor = requestActor(ctx);
    await deps.atomic((trx) => enrollPartner(trx, partnerId, programId, now, actor));
    const partner = await deps.db('partners').where({ id: partnerId }).first('id', 'name', 'email', 'code');
    ctx.status = 201;
    ctx.body = { success: true, data: { ...partner, program_id: programId } };
  };
}
