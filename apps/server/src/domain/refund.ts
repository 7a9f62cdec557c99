/**
 * Spec 4.4 and 6.1's refunds and disputes: reversing a sale's commission (claw-back when it was
 * already paid). Called by the refund route and the Stripe intake. Each new refund writes
 * `sale.refunded`, and a commission whose status it changed `commission.updated`, in the
 * refund's transaction.
 */
import type { Knex } from 'knex';
import { ERRORS, type CommissionStatus, type Currency, type RefundReason, type RefundResponse } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { insertId } from '../db/insert-id.js';
import { appendEvents, type NewEvent } from '../db/outbox.js';
import { isSqlite, isUniqueViolation } from '../db/knex.js';
import { inSavepoint } from '../db/savepoint.js';
import { commissionObject, refundObject, saleObject } from './event-objects.js';

/** The refund endpoint reverses a sale once; a repeat answers with the first refund. */
export const API_REFUND_REF = 'api';

export interface CommissionReversal {
  commissionId: number | null;
  status: CommissionStatus | null;
  /** The status before this reversal (null: no commission). */
  previousStatus: CommissionStatus | null;
  adjustmentCents: number;
}

/**
 * pending/approved → reversed; paid → reversed plus a negative adjustment (claw-back).
 * `fraction` prorates a partial refund (1 = the whole sale): a partial refund of a paid
 * commission claws back its part and leaves the commission paid.
 */
export async function reverseCommission(trx: Knex.Transaction, saleId: number, reason: string, now: number, fraction = 1): Promise<CommissionReversal> {
  // The row is locked on PostgreSQL (SQLite has one writer): an approval or a payout of this
  // commission running at the same time waits, or this waits for it, so the refund sees the status
  // that commits — a commission paid a moment ago is clawed back, never silently reversed unpaid.
  const query = trx('commissions').where({ sale_id: saleId });
  const commission = await (isSqlite(trx) ? query : query.forUpdate()).first('id', 'status', 'amount_cents');
  if (!commission) return { commissionId: null, status: null, previousStatus: null, adjustmentCents: 0 };
  const previousStatus = commission.status as CommissionStatus;
  // A reversed commission stays as it is; a declined one was never owed, so a refund changes nothing.
  if (previousStatus === 'reversed' || previousStatus === 'declined') return { commissionId: commission.id, status: previousStatus, previousStatus, adjustmentCents: 0 };
  let adjustment = 0;
  if (previousStatus === 'paid') {
    adjustment = -Math.round(Number(commission.amount_cents) * fraction);
    await trx('commission_adjustments').insert({ commission_id: commission.id, amount_cents: adjustment, reason, created_at: now });
  }
  const reverses = fraction >= 1 || previousStatus !== 'paid';
  if (reverses) await markReversed(trx, commission.id, now);
  return { commissionId: commission.id, status: reverses ? 'reversed' : previousStatus, previousStatus, adjustmentCents: adjustment };
}

/** The commission and its platform fee are reversed (once; a reversed one stays as it is). */
export async function markReversed(trx: Knex.Transaction, commissionId: number, now: number): Promise<boolean> {
  const changed = await trx('commissions').where({ id: commissionId }).whereNot({ status: 'reversed' }).update({ status: 'reversed', updated_at: now });
  await trx('platform_fees').where({ commission_id: commissionId }).update({ status: 'reversed' });
  return changed > 0;
}

/**
 * The events of a new refund: `sale.refunded` with the sale, the refund and the commission as
 * they now are, and `commission.updated` when the refund changed the commission's status.
 */
export async function appendRefundEvents(trx: Knex.Transaction, refundId: number, previousStatus: CommissionStatus | null, now: number): Promise<void> {
  const refund = await trx('refunds').where({ id: refundId }).first();
  const sale = await trx('sale_events as s').leftJoin('customers as c', 'c.id', 's.customer_id').where('s.id', refund.sale_id).first('s.*', 'c.customer_key', 'c.partner_id');
  const commissionRow = await trx('commissions').where({ sale_id: refund.sale_id }).first();
  const commission = commissionRow ? commissionObject(commissionRow) : null;
  const programId = Number(sale.program_id);
  const events: NewEvent[] = [
    {
      type: 'sale.refunded',
      programId,
      data: {
        sale: saleObject(Number(sale.id), sale, sale.customer_key ?? null, sale.partner_id == null ? null : Number(sale.partner_id)),
        refund: refundObject(refundId, refund, String(sale.processor_event_id), sale.currency as Currency),
        commission,
      },
      occurredAt: now,
    },
  ];
  if (commission && previousStatus !== null && commission.status !== previousStatus) {
    events.push({ type: 'commission.updated', programId, data: { commission, previous_status: previousStatus }, occurredAt: now });
  }
  await appendEvents(trx, events);
}

export interface RefundRequest {
  programId: number;
  transactionId: string;
  reason: RefundReason;
  refundReason: string | null;
}

/** 4.4: the refund endpoint's unit of work. A repeat answers with the first refund and changes nothing. */
export async function refundSale(trx: Knex.Transaction, request: RefundRequest, now: number): Promise<RefundResponse['data']> {
  const { programId, transactionId, reason } = request;
  const sale = await trx('sale_events').where({ processor_event_id: transactionId, program_id: programId }).first('id', 'amount_cents');
  if (!sale) fail(ERRORS.refundNotFound);
  const earlier = await trx('refunds').where({ sale_id: sale.id, external_ref: API_REFUND_REF }).first('id', 'reason');
  const reversal = await reverseCommission(trx, sale.id, reason, now);
  let refundId = earlier?.id as number | undefined;
  if (refundId === undefined) {
    try {
      refundId = await inSavepoint(trx, (sp) =>
        insertId(sp, 'refunds', { sale_id: sale.id, program_id: programId, reason, refund_reason: request.refundReason, amount_cents: sale.amount_cents, external_ref: API_REFUND_REF, created_at: now }),
      );
      await appendRefundEvents(trx, refundId, reversal.previousStatus, now);
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
}
