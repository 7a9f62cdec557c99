/**
 * Spec 4.3 and the sale rows of 3.1: a sale with the attribution window, the commission and the
 * platform fee. Called by the sale route, the Stripe intake and the synthetic chains. A stored
 * real sale writes `sale.created` (and `commission.created` when it pays one) in its transaction.
 */
import type { Knex } from 'knex';
import { ERRORS, LIMITS, type CommissionReviewReason, type CommissionType, type NoCommissionReason, type SaleResponse } from '@reftrack/contract';
import { ApiError, fail } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import { insertId } from '../db/insert-id.js';
import { appendEvents, type NewEvent } from '../db/outbox.js';
import { findCustomer, type CustomerRecord } from '../db/customers.js';
import { isUniqueViolation } from '../db/knex.js';
import { inSavepoint } from '../db/savepoint.js';
import { withinAttributionWindow } from './attribution.js';
import { commissionAmount, paysThisSale, platformFee, PLATFORM_FEE_BPS } from './commission.js';
import { commissionObject, saleObject } from './event-objects.js';
import type { SaleInput } from './sale-input.js';

const DAY_MS = 86_400_000;

/** What a sale needs besides its transaction: the fault hooks of the tests and a logger. */
export type SaleDeps = Pick<AppDeps, 'faults' | 'logger'>;

/** `partner_required`: stored, but 7.5 answers 400 because the customer has no partner. */
export type SaleOutcome = { kind: 'recorded'; response: SaleResponse } | { kind: 'partner_required' };

/** 4.3 rule 3: the transaction id was recorded before (by any program). */
export class DuplicateSale extends Error {
  constructor(readonly transactionId: string) {
    super('duplicate transaction_id');
  }
}

function saleRow(input: SaleInput, programId: number, transactionId: string, customer: CustomerRecord | undefined, now: number) {
  return {
    program_id: programId,
    customer_id: customer?.id ?? null,
    click_id: customer?.clickId ?? input.clickId ?? null,
    processor_event_id: transactionId,
    amount_cents: input.amountCents ?? 0,
    currency: input.currency,
    sale_type: input.saleType,
    payment_status: 'paid',
    is_recurring: input.isRecurring,
    subscription_id: input.subscriptionId,
    provider: input.provider,
    provider_payment_id: input.providerPaymentId,
    livemode: input.livemode,
    is_test: input.testMode,
    sale_date: input.occurredAt,
    created_at: now,
    commission_reason: null as NoCommissionReason | null,
  };
}

/**
 * A unique violation aborts a PostgreSQL transaction: the insert runs in a savepoint only where the
 * caller goes on after a duplicate (generated test ids); elsewhere a duplicate ends the unit anyway.
 */
async function insertSale(trx: Knex.Transaction, row: Record<string, unknown>, isolated = false): Promise<number> {
  const insert = (q: Knex.Transaction) => insertId(q, 'sale_events', row);
  try {
    return isolated ? await inSavepoint(trx, insert) : await insert(trx);
  } catch (err) {
    if (isUniqueViolation(err)) throw new DuplicateSale(String(row.processor_event_id));
    throw err;
  }
}

/** Rule 1: a test sale authenticates the key, stores a test-flagged sale and a log entry, no commission. */
export async function recordTestSale(trx: Knex.Transaction, input: SaleInput, programId: number, now: number): Promise<SaleOutcome> {
  let transactionId = input.transactionId;
  let saleId: number | undefined;
  for (let attempt = 0; saleId === undefined; attempt++) {
    const txn = transactionId ?? `test_txn_${now + attempt}`;
    try {
      saleId = await insertSale(trx, { ...saleRow(input, programId, txn, undefined, now), commission_reason: 'test_mode' }, input.transactionId === undefined);
      transactionId = txn;
    } catch (err) {
      // Only a generated id may be retried; a caller's duplicate id is a 409 like any other.
      if (!(err instanceof DuplicateSale) || input.transactionId !== undefined || attempt > 20) throw err;
    }
  }
  await trx('tracking_logs').insert({ program_id: programId, kind: 'sale', is_test: true, message: `Test sale ${transactionId}`, created_at: now });
  return { kind: 'recorded', response: { success: true, data: { test_mode: true, sale_id: saleId, transaction_id: transactionId!, commission_reason: 'test_mode' } } };
}

/**
 * Rules 2-5 for a real sale. `test` (synthetic chains) runs the same attribution on test-flagged
 * customers and stores a test-flagged sale without commission, fee, metrics or events.
 */
export async function recordSale(trx: Knex.Transaction, deps: SaleDeps, input: SaleInput, programId: number, now: number, test = false): Promise<SaleOutcome> {
  const customer = await findCustomer(trx, { clickId: input.clickId, customerKey: input.customerKey }, programId, test);
  if (!customer) fail(ERRORS.saleCustomerNotFound);
  if (customer.programId !== programId) fail(ERRORS.saleOtherProgram);
  // The program's terms and the customer's partner-program relationship, in one read.
  const program = await trx('programs as p')
    .leftJoin('partner_programs as pp', (on) => on.on('pp.program_id', 'p.id').andOnVal('pp.partner_id', customer.partnerId ?? -1))
    .where('p.id', programId)
    .first('p.commission_type', 'p.commission_rate', 'p.attribution_window_days', 'p.commission_hold_days', 'pp.id as enrollment_id');
  if (customer.partnerId !== null && program.enrollment_id == null) fail(ERRORS.saleNoPartnerProgram);
  const attributed = withinAttributionWindow({
    clickAt: customer.clickAt,
    leadAt: customer.leadAt,
    convertedAt: customer.convertedAt,
    windowDays: program.attribution_window_days,
    paymentAt: input.occurredAt,
  });
  if (!attributed) {
    return { kind: 'recorded', response: { success: true, data: { attributed: false, reason: 'attribution_window_expired' } } };
  }
  const transactionId = input.transactionId!;
  const type = program.commission_type as CommissionType;
  const pays = paysThisSale(type, customer.convertedAt !== null);
  const reason: NoCommissionReason | null = customer.partnerId === null ? 'no_partner' : test ? 'test_mode' : pays ? null : 'first_sale_only';
  const row = { ...saleRow(input, programId, transactionId, customer, now), is_test: test || input.testMode, commission_reason: reason };
  const saleId = await insertSale(trx, row);
  const events: NewEvent[] = test ? [] : [{ type: 'sale.created', programId, workspaceId: customer.workspaceId, data: { sale: saleObject(saleId, row, customer.customerKey, customer.partnerId) }, occurredAt: now }];
  // 7.5: the sale is stored before this refusal, so a resend answers 409.
  if (customer.partnerId === null) {
    await appendEvents(trx, events);
    return { kind: 'partner_required' };
  }
  await deps.faults.afterSaleInsert?.();
  let commissionId: number | null = null;
  let amount = 0;
  if (reason === null) {
    amount = commissionAmount(type, Number(program.commission_rate), input.amountCents!, input.currency);
    // The hold (docs/commissions.md): the approval job approves it when this passes without a refund.
    // A self-referral is held for the owner's review instead: no hold end, so the job never approves it.
    const review = test ? [] : await selfReferralReasons(trx, customer.id, customer.partnerId, input.processorEmail ?? null);
    const holdUntil = review.length > 0 ? null : now + Number(program.commission_hold_days ?? LIMITS.commissionHoldDaysDefault) * DAY_MS;
    const commission = { sale_id: saleId, program_id: programId, partner_id: customer.partnerId, customer_id: customer.id, amount_cents: amount, currency: input.currency, status: 'pending', hold_until: holdUntil, review_reasons: review.length > 0 ? review.join(' ') : null, created_at: now, updated_at: now };
    commissionId = await insertId(trx, 'commissions', commission);
    await trx('platform_fees').insert({ commission_id: commissionId, sale_id: saleId, program_id: programId, amount_cents: platformFee(amount), currency: input.currency, rate_bps: PLATFORM_FEE_BPS, status: 'pending', created_at: now });
    events.push({ type: 'commission.created', programId, workspaceId: customer.workspaceId, data: { commission: commissionObject({ id: commissionId, ...commission }) }, occurredAt: now });
  }
  if (customer.convertedAt === null) await trx('customers').where({ id: customer.id }).update({ converted_at: now });
  if (!test) await updatePartnerMetrics(trx, deps, customer.partnerId, programId, input.amountCents!);
  await appendEvents(trx, events);
  return {
    kind: 'recorded',
    response: { success: true, data: { attributed: true, sale_id: saleId, transaction_id: transactionId, commission_id: commissionId, commission_amount_cents: amount, currency: input.currency, commission_reason: reason } },
  };
}

/** An e-mail address compared for self-referral: lower case, without a `+tag` (pat+shop@x is pat@x). */
function comparable(email: string | null | undefined): string | null {
  if (!email) return null;
  const [local, domain] = email.trim().toLowerCase().split('@');
  if (!local || !domain) return null;
  return `${local.split('+')[0]}@${domain}`;
}

/**
 * Self-referral (docs/commissions.md "Held for review"): the customer's e-mail (saved by its lead),
 * or the processor's customer e-mail of this payment, is the partner's own.
 */
async function selfReferralReasons(trx: Knex.Transaction, customerId: number, partnerId: number, processorEmail: string | null): Promise<CommissionReviewReason[]> {
  // One read for both addresses: this runs on every paid sale.
  const row = await trx('partners as p').leftJoin('customers as c', 'c.id', trx.raw('?', [customerId])).where('p.id', partnerId).first('p.email as partner_email', 'c.email as customer_email');
  const partner = comparable(row?.partner_email);
  if (!partner) return [];
  const reasons: CommissionReviewReason[] = [];
  if (comparable(row?.customer_email) === partner) reasons.push('self_referral_email');
  if (comparable(processorEmail) === partner) reasons.push('self_referral_processor_email');
  return reasons;
}

/**
 * Rule 5: metrics are best effort — in a savepoint of their own, so a failure is logged and never
 * fails the sale. The running revenue total never passes 2^53 − 1 (docs/security.md, "Amounts"):
 * past it a JavaScript number could not hold it exactly, so it stops there and the refusal is logged.
 */
async function updatePartnerMetrics(trx: Knex.Transaction, deps: SaleDeps, partnerId: number, programId: number, amount: number): Promise<void> {
  try {
    const updated = await inSavepoint(trx, (sp) =>
      sp('partner_programs')
        .where({ partner_id: partnerId, program_id: programId })
        .where('revenue_cents', '<=', Number.MAX_SAFE_INTEGER - amount)
        .update({ sales: sp.raw('sales + 1'), revenue_cents: sp.raw('revenue_cents + ?', [amount]) }),
    );
    if (updated === 0) deps.logger.warn({ partnerId, programId }, 'partner metrics not updated: the revenue total would pass the exact integer range');
  } catch (err) {
    deps.logger.warn({ err }, 'partner metrics update failed');
  }
}

/** 7.5's 409 for a duplicate, naming the sale that holds the transaction id. */
export async function duplicateSaleError(db: Knex, transactionId: string): Promise<ApiError> {
  const sale = await db('sale_events').where({ processor_event_id: transactionId }).first('id');
  return new ApiError(ERRORS.saleDuplicate, {}, { sale_id: sale ? Number(sale.id) : null });
}
