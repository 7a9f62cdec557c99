/** POST /api/v1/track/refund — spec 4.4, 7.5. Reverses the sale's commission (claw-back when already paid). */
import type { Context } from 'koa';
import { insertId } from '../../db/insert-id.js';
import type { Knex } from 'knex';
import { ERRORS, REFUND_REASONS, type CommissionStatus, type RefundReason, type RefundResponse } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { isUniqueViolation } from '../../db/knex.js';
import { inSavepoint } from '../../db/savepoint.js';

/** The refund endpoint reverses a sale once; a repeat answers with the first refund. */
const API_REFUND_REF = 'api';

export interface CommissionReversal {
  commissionId: number | null;
  status: CommissionStatus | null;
  adjustmentCents: number;
}

/**
 * pending/approved → reversed; paid → reversed plus a negative adjustment (claw-back).
 * `fraction` prorates a partial refund (1 = the whole sale).
 */
export async function reverseCommission(trx: Knex.Transaction, saleId: number, reason: string, now: number, fraction = 1): Promise<CommissionReversal> {
  const commission = await trx('commissions').where({ sale_id: saleId }).first('id', 'status', 'amount_cents');
  if (!commission) return { commissionId: null, status: null, adjustmentCents: 0 };
  if (commission.status === 'reversed') return { commissionId: commission.id, status: 'reversed', adjustmentCents: 0 };
  let adjustment = 0;
  if (commission.status === 'paid') {
    adjustment = -Math.round(Number(commission.amount_cents) * fraction);
    await trx('commission_adjustments').insert({ commission_id: commission.id, amount_cents: adjustment, reason, created_at: now });
  }
  if (fraction >= 1 || commission.status !== 'paid') {
    await trx('commissions').where({ id: commission.id }).update({ status: 'reversed', updated_at: now });
    await trx('platform_fees').where({ commission_id: commission.id }).update({ status: 'reversed' });
  }
  return { commissionId: commission.id, status: fraction >= 1 || commission.status !== 'paid' ? 'reversed' : commission.status, adjustmentCents: adjustment };
}

export function trackRefund(deps: AppDeps) {
  return async function handleRefund(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.refund, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const body = readBody(ctx);
    const transactionId = str(body.transaction_id);
    if (!transactionId || transactionId.length > 255) fail(ERRORS.refundTransactionId);
    let reason: RefundReason = 'refund';
    if (body.reason !== undefined && body.reason !== null) {
      if (!(REFUND_REASONS as readonly unknown[]).includes(body.reason)) fail(ERRORS.refundReason);
      reason = body.reason as RefundReason;
    }
    if (body.refund_reason !== undefined && body.refund_reason !== null && typeof body.refund_reason !== 'string') fail(ERRORS.refundRefundReason);
    const refundReason = typeof body.refund_reason === 'string' ? body.refund_reason.slice(0, 2000) : null;
    const now = deps.now();
    const data = await deps.atomic(async (trx): Promise<RefundResponse['data']> => {
      const sale = await trx('sale_events').where({ processor_event_id: transactionId, program_id: key.programId }).first('id', 'amount_cents');
      if (!sale) fail(ERRORS.refundNotFound);
      const earlier = await trx('refunds').where({ sale_id: sale.id, external_ref: API_REFUND_REF }).first('id', 'reason');
      const reversal = await reverseCommission(trx, sale.id, reason, now);
      let refundId = earlier?.id as number | undefined;
      if (refundId === undefined) {
        try {
          refundId = await inSavepoint(trx, (sp) =>
            insertId(sp, 'refunds', { sale_id: sale.id, program_id: key.programId, reason, refund_reason: refundReason, amount_cents: sale.amount_cents, external_ref: API_REFUND_REF, created_at: now }),
          );
        } catch (err) {
          if (!isUniqueViolation(err)) throw err;
          refundId = (await trx('refunds').where({ sale_id: sale.id, external_ref: API_REFUND_REF }).first('id')).id;
        }
      }
      return {
        refund_id: Number(refundId),
        sale_id: Number(sale.id),
        transaction_id: transactionId,
        reason: (earlier?.reason as RefundReason | undefined) ?? reason,
        commission_id: reversal.commissionId,
        commission_status: reversal.status,
        adjustment_amount_cents: reversal.adjustmentCents,
      };
    });
    ctx.body = { success: true, data } satisfies RefundResponse;
  };
}
