/** POST /api/v1/track/sale — spec 4.3, 3.1 (sale rows), 7.5. */
import type { Context } from 'koa';
import { insertId } from '../../db/insert-id.js';
import type { Knex } from 'knex';
import { ERRORS, type CommissionType, type SaleResponse } from '@reftrack/contract';
import { ApiError, fail } from '../../http/api-error.js';
import { readBody } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { findCustomer, type CustomerRecord } from '../../db/customers.js';
import { isUniqueViolation } from '../../db/knex.js';
import { inSavepoint } from '../../db/savepoint.js';
import { withinAttributionWindow } from '../../domain/attribution.js';
import { commissionAmount, paysThisSale, platformFee, PLATFORM_FEE_BPS } from '../../domain/commission.js';
import { parseSaleInput, type SaleInput } from './sale-input.js';

export type Outcome = { kind: 'recorded'; response: SaleResponse } | { kind: 'partner_required' };

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
export async function testSale(trx: Knex.Transaction, input: SaleInput, programId: number, now: number): Promise<Outcome> {
  let transactionId = input.transactionId;
  let saleId: number | undefined;
  for (let attempt = 0; saleId === undefined; attempt++) {
    const txn = transactionId ?? `test_txn_${now + attempt}`;
    try {
      saleId = await insertSale(trx, saleRow(input, programId, txn, undefined, now), input.transactionId === undefined);
      transactionId = txn;
    } catch (err) {
      // Only a generated id may be retried; a caller's duplicate id is a 409 like any other.
      if (!(err instanceof DuplicateSale) || input.transactionId !== undefined || attempt > 20) throw err;
    }
  }
  await trx('tracking_logs').insert({ program_id: programId, kind: 'sale', is_test: true, message: `Test sale ${transactionId}`, created_at: now });
  return { kind: 'recorded', response: { success: true, data: { test_mode: true, sale_id: saleId, transaction_id: transactionId! } } };
}

/**
 * Rules 2-5 for a real sale. `test` (synthetic chains) runs the same attribution on test-flagged
 * customers and stores a test-flagged sale without commission, fee or metrics.
 */
export async function realSale(trx: Knex.Transaction, deps: AppDeps, input: SaleInput, programId: number, now: number, test = false): Promise<Outcome> {
  const customer = await findCustomer(trx, { clickId: input.clickId, customerKey: input.customerKey }, programId, test);
  if (!customer) fail(ERRORS.saleCustomerNotFound);
  if (customer.programId !== programId) fail(ERRORS.saleOtherProgram);
  // The program's terms and the customer's partner-program relationship, in one read.
  const program = await trx('programs as p')
    .leftJoin('partner_programs as pp', (on) => on.on('pp.program_id', 'p.id').andOnVal('pp.partner_id', customer.partnerId ?? -1))
    .where('p.id', programId)
    .first('p.commission_type', 'p.commission_rate', 'p.attribution_window_days', 'pp.id as enrollment_id');
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
  const saleId = await insertSale(trx, { ...saleRow(input, programId, transactionId, customer, now), is_test: test || input.testMode });
  // 7.5: the sale is stored before this refusal, so a resend answers 409.
  if (customer.partnerId === null) return { kind: 'partner_required' };
  await deps.faults.afterSaleInsert?.();
  const type = program.commission_type as CommissionType;
  let commissionId: number | null = null;
  let amount = 0;
  if (!test && paysThisSale(type, customer.convertedAt !== null)) {
    amount = commissionAmount(type, Number(program.commission_rate), input.amountCents!, input.currency);
    commissionId = await insertId(trx, 'commissions', { sale_id: saleId, program_id: programId, partner_id: customer.partnerId, customer_id: customer.id, amount_cents: amount, currency: input.currency, status: 'pending', created_at: now, updated_at: now });
    await trx('platform_fees').insert({ commission_id: commissionId, sale_id: saleId, program_id: programId, amount_cents: platformFee(amount), currency: input.currency, rate_bps: PLATFORM_FEE_BPS, status: 'pending', created_at: now });
  }
  if (customer.convertedAt === null) await trx('customers').where({ id: customer.id }).update({ converted_at: now });
  if (!test) await updatePartnerMetrics(trx, deps, customer.partnerId, programId, input.amountCents!);
  return {
    kind: 'recorded',
    response: { success: true, data: { attributed: true, sale_id: saleId, transaction_id: transactionId, commission_id: commissionId, commission_amount_cents: amount, currency: input.currency } }
  };
}

/** Rule 5: metrics are best effort — in a savepoint of their own, so a failure is logged and never fails the sale. */
async function updatePartnerMetrics(trx: Knex.Transaction, deps: AppDeps, partnerId: number, programId: number, amount: number): Promise<void> {
  try {
    await inSavepoint(trx, (sp) =>
      sp('partner_programs')
        .where({ partner_id: partnerId, program_id: programId })
        .update({ sales: sp.raw('sales + 1'), revenue_cents: sp.raw('revenue_cents + ?', [amount]) }),
    );
  } catch (err) {
    deps.logger.warn({ err }, 'partner metrics update failed');
  }
}

async function duplicateError(deps: AppDeps, transactionId: string): Promise<ApiError> {
  const sale = await deps.db('sale_events').where({ processor_event_id: transactionId }).first('id');
  return new ApiError(ERRORS.saleDuplicate, {}, { sale_id: sale ? Number(sale.id) : null });
}

export function trackSale(deps: AppDeps) {
  return async function handleSale(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.sale, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const now = deps.now();
    const input = parseSaleInput(readBody(ctx), now);
    let outcome: Outcome;
    try {
      outcome = await deps.atomic((trx) => (input.testMode ? testSale(trx, input, key.programId, now) : realSale(trx, deps, input, key.programId, now)));
    } catch (err) {
      if (err instanceof DuplicateSale) throw await duplicateError(deps, err.transactionId);
      throw err;
    }
    if (outcome.kind === 'partner_required') fail(ERRORS.salePartnerRequired);
    ctx.body = outcome.response;
  };
}
