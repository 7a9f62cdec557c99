/**
 * /api/dashboard/programs/:id/commissions — the commission ledger (JSON pages or CSV), approving and
 * declining commissions, and the partners' balances (docs/commissions.md).
 */
import type { Context } from 'koa';
import { ERRORS, INPUT_RULES, LIMITS, type BalancesResponse, type CommissionReviewResponse, type LedgerResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { readBalances, readLedger, readLedgerPage } from '../../db/commission-ledger.js';
import { reviewCommissions, type ReviewAction } from '../../domain/commission-review.js';
import { LEDGER_CSV_COLUMNS, ledgerCsvRows, parseLedgerQuery } from '../../domain/ledger-query.js';

/** Rows read per query while a CSV export is written. */
const CSV_CHUNK = 1000;

export function listCommissions(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:read');
    const { filter, limit } = parseLedgerQuery(programId, ctx.query);
    if (ctx.query.format === 'csv') {
      // The whole filtered ledger, oldest page last, read in chunks so memory stays bounded per query.
      let csv = LEDGER_CSV_COLUMNS.join(',') + '\r\n';
      let beforeId = filter.beforeId;
      for (;;) {
        const rows = await readLedger(deps.db, { ...filter, beforeId }, CSV_CHUNK);
        csv += ledgerCsvRows(rows);
        if (rows.length < CSV_CHUNK) break;
        beforeId = rows[rows.length - 1].id;
      }
      ctx.type = 'text/csv; charset=utf-8';
      ctx.set('Content-Disposition', `attachment; filename="commissions-program-${programId}.csv"`);
      ctx.body = csv;
      return;
    }
    ctx.body = (await readLedgerPage(deps.db, filter, limit)) satisfies LedgerResponse;
  };
}

function parseIds(value: unknown): number[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > LIMITS.commissionBulkMax) fail(ERRORS.commissionIdsInvalid);
  return value.map((v) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > Number.MAX_SAFE_INTEGER) fail(ERRORS.commissionIdsInvalid);
    return v;
  });
}

/** POST …/commissions/approve {ids} and …/commissions/decline {ids, reason}: one transaction, a result per id. */
export function reviewCommissionsRoute(deps: AppDeps, action: ReviewAction) {
  return async function handleReview(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:manage');
    const body = readBody(ctx);
    const ids = parseIds(body.ids);
    let reason: string | null = null;
    if (action === 'decline') {
      if (typeof body.reason !== 'string' || !body.reason.trim() || body.reason.length > INPUT_RULES.declineReasonMaxLength) fail(ERRORS.commissionDeclineReasonRequired);
      reason = body.reason.trim();
    }
    const actor = requestActor(ctx);
    const results = await deps.atomic((trx) => reviewCommissions(trx, programId, ids, action, reason, actor, deps.now()));
    ctx.body = { success: true, data: results } satisfies CommissionReviewResponse;
  };
}

export function listBalances(deps: AppDeps) {
  return async function handleBalances(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:read');
    const partner = ctx.query.partner_id === undefined ? undefined : parseId(ctx.query.partner_id, ERRORS.commissionPartnerInvalid);
    ctx.body = { success: true, data: await readBalances(deps.db, programId, partner) } satisfies BalancesResponse;
  };
}
