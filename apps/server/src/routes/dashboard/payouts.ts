/**
 * Payouts (docs/commissions.md): listing and creating a program's payouts, batches, marking a
 * payout sent or failed, and exporting a batch as a PayPal or Wise payout file.
 */
import type { Context } from 'koa';
import { ERRORS, INPUT_RULES, PAYOUT_FILE_FORMATS, PAYOUT_METHODS, PAYOUT_STATUSES, type PayoutBatchResponse, type PayoutFileFormat, type PayoutListResponse, type PayoutMethod, type PayoutResponse, type PayoutStatus } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import { can, demand, parseId, programWithRole, roleIn } from '../../auth/workspace-access.js';
import { changePayoutStatus, createPayout, createPayoutBatch, NotPayable, readPayouts, majorUnits } from '../../domain/payouts.js';
import { parseCurrency } from '../../domain/ledger-query.js';
import { readPayoutDetails } from '../../domain/payout-details.js';
import { payoutFile, ROWS_PER_FILE } from '../../domain/payout-files.js';

function methodOf(value: unknown): PayoutMethod {
  if (value === undefined) return 'manual';
  if (typeof value !== 'string' || !(PAYOUT_METHODS as readonly string[]).includes(value)) fail(ERRORS.payoutMethodInvalid);
  return value as PayoutMethod;
}

function referenceOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !INPUT_RULES.payoutReference.test(value) || !value.trim()) fail(ERRORS.payoutReferenceInvalid);
  return value.trim();
}

const noteOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim().slice(0, INPUT_RULES.payoutNoteMaxLength) : null);

export function listPayouts(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:read');
    const batch = ctx.query.batch_id === undefined ? undefined : parseId(ctx.query.batch_id, ERRORS.payoutBatchNotFound);
    ctx.body = { success: true, data: await readPayouts(deps.db, { programId, batchId: batch }) } satisfies PayoutListResponse;
  };
}

export function createPayoutRoute(deps: AppDeps) {
  return async function handleCreate(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    const { workspaceId } = await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:manage');
    const body = readBody(ctx);
    const partnerId = parseId(body.partner_id, ERRORS.partnerNotFound);
    const currency = parseCurrency(body.currency);
    const method = methodOf(body.method);
    const reference = referenceOf(body.reference);
    const partner = await deps.db('partners').where({ id: partnerId, workspace_id: workspaceId }).first('id');
    if (!partner) fail(ERRORS.partnerNotFound);
    const actor = requestActor(ctx);
    try {
      const payout = await deps.atomic((trx) => createPayout(trx, { programId, partnerId, currency, method, reference, note: noteOf(body.note) }, actor, deps.now()));
      ctx.status = 201;
      ctx.body = { success: true, data: payout } satisfies PayoutResponse;
    } catch (err) {
      if (err instanceof NotPayable) fail(ERRORS.payoutNothingPayable, { currency, amount: majorUnits(err.payableCents, currency) });
      throw err;
    }
  };
}

export function createPayoutBatchRoute(deps: AppDeps) {
  return async function handleBatch(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'commissions:manage');
    const body = readBody(ctx);
    const method = methodOf(body.method);
    const currency = body.currency === undefined || body.currency === null ? null : parseCurrency(body.currency);
    const actor = requestActor(ctx);
    const data = await deps.atomic((trx) => createPayoutBatch(trx, programId, method, currency, actor, deps.now()));
    ctx.status = 201;
    ctx.body = { success: true, data } satisfies PayoutBatchResponse;
  };
}

/** The programs of the workspaces where the caller may manage payouts (a payout of any other answers 404). */
async function managedPrograms(deps: AppDeps, accountId: number): Promise<number[]> {
  const rows = await deps.db('programs as p').join('memberships as m', 'm.workspace_id', 'p.workspace_id').where('m.account_id', accountId).select('p.id', 'm.role');
  return rows.filter((r) => can(r.role, 'commissions:manage')).map((r) => Number(r.id));
}

export function updatePayoutRoute(deps: AppDeps) {
  return async function handleUpdate(ctx: Context): Promise<void> {
    const payoutId = parseId(ctx.params.id, ERRORS.payoutNotFound);
    const body = readBody(ctx);
    const status = body.status;
    if (typeof status !== 'string' || status === 'created' || !(PAYOUT_STATUSES as readonly string[]).includes(status)) fail(ERRORS.payoutStatusInvalid);
    const accountId = ctx.state.account!.accountId;
    const payout = await deps.db('payouts as po').join('programs as p', 'p.id', 'po.program_id').where('po.id', payoutId).first('p.workspace_id');
    const role = payout ? await roleIn(deps.db, accountId, payout.workspace_id) : undefined;
    if (!payout || !role) fail(ERRORS.payoutNotFound);
    demand(role, 'commissions:manage');
    const programs = await managedPrograms(deps, accountId);
    const actor = requestActor(ctx);
    const updated = await deps.atomic((trx) => changePayoutStatus(trx, payoutId, programs, status as PayoutStatus, noteOf(body.note), actor, deps.now()));
    ctx.body = { success: true, data: updated } satisfies PayoutResponse;
  };
}

/** GET /api/dashboard/payout-batches/:id/export?format=paypal|wise&currency=USD&part=1 */
export function exportPayoutBatch(deps: AppDeps) {
  return async function handleExport(ctx: Context): Promise<void> {
    const batchId = parseId(ctx.params.id, ERRORS.payoutBatchNotFound);
    const batch = await deps.db('payout_batches as b').join('programs as p', 'p.id', 'b.program_id').where('b.id', batchId).first('b.program_id', 'p.name', 'p.workspace_id');
    const role = batch ? await roleIn(deps.db, ctx.state.account!.accountId, batch.workspace_id) : undefined;
    // Another workspace's batch answers 404, like a missing one.
    if (!batch || !role) fail(ERRORS.payoutBatchNotFound);
    demand(role, 'commissions:manage');
    const format = ctx.query.format;
    if (typeof format !== 'string' || !(PAYOUT_FILE_FORMATS as readonly string[]).includes(format)) fail(ERRORS.payoutExportFormatInvalid);
    if (ctx.query.currency === undefined) fail(ERRORS.payoutExportCurrencyRequired);
    const currency = parseCurrency(ctx.query.currency);
    const partText = ctx.query.part === undefined ? '1' : String(ctx.query.part);
    // Failed payouts are not paid by a file.
    const payouts = (await readPayouts(deps.db, { batchId, currency }, 100_000)).filter((p) => p.status !== 'failed').reverse();
    const details = await readPayoutDetails(deps.db, deps.secrets, payouts.map((p) => p.partner.id));
    const missing = payouts.filter((p) => details.get(p.partner.id)?.method !== format).map((p) => p.partner.code);
    if (missing.length > 0) fail(ERRORS.payoutDetailsMissing, { format, partners: missing.slice(0, 20).join(', ') });
    const perFile = ROWS_PER_FILE[format as PayoutFileFormat];
    const parts = Math.max(1, Math.ceil(payouts.length / perFile));
    const part = /^\d{1,6}$/.test(partText) ? Number(partText) : 0;
    if (part < 1 || part > parts) fail(ERRORS.payoutExportPartInvalid, { parts });
    const rows = payouts.slice((part - 1) * perFile, part * perFile).map((payout) => ({ payout, details: details.get(payout.partner.id)! }));
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="payouts-batch-${batchId}-${currency}-${format}-part-${part}-of-${parts}.csv"`);
    ctx.set('Reftrack-File-Parts', String(parts));
    ctx.body = payoutFile(format as PayoutFileFormat, currency, rows, String(batch.name));
  };
}
