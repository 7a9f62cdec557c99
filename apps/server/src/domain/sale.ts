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
import { changedRows, firstRow, insertRow } from '../db/statement.js';
import { appendEvents, eventRow, type NewEvent } from '../db/outbox.js';
import { findCustomer, type CustomerRecord } from '../db/customers.js';
import { isSqlite, isUniqueViolation } from '../db/knex.js';
import { inSavepoint } from '../db/savepoint.js';
import { isRefusedStatement, onPgConnection, readForSales, writeSales, type SaleRead, type SaleWrite } from '../db/pg-tracking.js';
import { queuePerDatabase, type BatchOutcome } from '../db/group-commit-queue.js';
import type { Db } from '../db/knex.js';
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

/** The key program's terms and the customer's partner's enrolment in it (null: not enrolled). */
export interface ProgramTerms {
  commission_type: unknown;
  commission_rate: unknown;
  attribution_window_days: unknown;
  commission_hold_days: unknown;
  enrollment_id: unknown;
}

/** 7.5's refusals about the customer, in the spec's order. */
function checkSaleCustomer(customer: CustomerRecord | undefined, programId: number): asserts customer is CustomerRecord {
  if (!customer) fail(ERRORS.saleCustomerNotFound);
  if (customer.programId !== programId) fail(ERRORS.saleOtherProgram);
}

function checkEnrollment(customer: CustomerRecord, program: ProgramTerms): void {
  if (customer.partnerId !== null && program.enrollment_id == null) fail(ERRORS.saleNoPartnerProgram);
}

const UNATTRIBUTED: SaleOutcome = { kind: 'recorded', response: { success: true, data: { attributed: false, reason: 'attribution_window_expired' } } };

const attributed = (customer: CustomerRecord, program: ProgramTerms, input: SaleInput): boolean =>
  withinAttributionWindow({ clickAt: customer.clickAt, leadAt: customer.leadAt, convertedAt: customer.convertedAt, windowDays: Number(program.attribution_window_days), paymentAt: input.occurredAt });

/** Rules 3-4: the sale's row, and why it pays no commission (null: it pays one). */
function saleTerms(customer: CustomerRecord, program: ProgramTerms, input: SaleInput, programId: number, now: number, test: boolean) {
  const type = program.commission_type as CommissionType;
  const pays = paysThisSale(type, customer.convertedAt !== null);
  const reason: NoCommissionReason | null = customer.partnerId === null ? 'no_partner' : test ? 'test_mode' : pays ? null : 'first_sale_only';
  const row = { ...saleRow(input, programId, input.transactionId!, customer, now), is_test: test || input.testMode, commission_reason: reason };
  return { type, reason, row };
}

/**
 * The commission of a paying sale (its ids aside). The hold (docs/commissions.md): the approval
 * job approves it when this passes without a refund. A self-referral is held for the owner's review
 * instead: no hold end, so the job never approves it.
 */
function commissionTerms(customer: CustomerRecord, program: ProgramTerms, type: CommissionType, input: SaleInput, programId: number, now: number, review: CommissionReviewReason[]) {
  const amount = commissionAmount(type, Number(program.commission_rate), input.amountCents!, input.currency);
  const holdUntil = review.length > 0 ? null : now + Number(program.commission_hold_days ?? LIMITS.commissionHoldDaysDefault) * DAY_MS;
  return { program_id: programId, partner_id: customer.partnerId!, customer_id: customer.id, amount_cents: amount, currency: input.currency, status: 'pending', hold_until: holdUntil, review_reasons: review.length > 0 ? review.join(' ') : null, created_at: now, updated_at: now };
}

const feeTerms = (amount: number) => ({ amount_cents: platformFee(amount), rate_bps: PLATFORM_FEE_BPS, status: 'pending' });

const saleCreated = (saleId: number, row: ReturnType<typeof saleTerms>['row'], customer: CustomerRecord, programId: number, now: number): NewEvent => ({
  type: 'sale.created', programId, workspaceId: customer.workspaceId, data: { sale: saleObject(saleId, row, customer.customerKey, customer.partnerId) }, occurredAt: now,
});

const commissionCreated = (commission: Record<string, unknown>, customer: CustomerRecord, programId: number, now: number): NewEvent => ({
  type: 'commission.created', programId, workspaceId: customer.workspaceId, data: { commission: commissionObject(commission) }, occurredAt: now,
});

function recorded(saleId: number, input: SaleInput, commissionId: number | null, amount: number, reason: NoCommissionReason | null): SaleOutcome {
  return {
    kind: 'recorded',
    response: { success: true, data: { attributed: true, sale_id: saleId, transaction_id: input.transactionId!, commission_id: commissionId, commission_amount_cents: amount, currency: input.currency, commission_reason: reason } },
  };
}

// Fixed texts (db/statement.ts): every paid sale sends these.
/** The program's terms and the customer's partner-program relationship (-1: no partner), in one read. */
const PROGRAM_TERMS = `select p.commission_type, p.commission_rate, p.attribution_window_days, p.commission_hold_days, pp.id as enrollment_id
  from programs p left join partner_programs pp on pp.program_id = p.id and pp.partner_id = ? where p.id = ? limit 1`;
/** The partner's and the customer's e-mail addresses. */
const REFERRAL_EMAILS = `select p.email as partner_email, c.email as customer_email from partners p left join customers c on c.id = ? where p.id = ? limit 1`;
const CUSTOMER_CONVERTED = `update customers set converted_at = ? where id = ? and converted_at is null`;
/** The partner's sale count and revenue in the program, while the total stays exact (updatePartnerMetrics). */
const COUNT_SALE = `update partner_programs set sales = sales + 1, revenue_cents = revenue_cents + ? where partner_id = ? and program_id = ? and revenue_cents <= ?`;

/**
 * Rules 2-5 for a real sale. `test` (synthetic chains) runs the same attribution on test-flagged
 * customers and stores a test-flagged sale without commission, fee, metrics or events.
 */
export async function recordSale(trx: Knex.Transaction, deps: SaleDeps, input: SaleInput, programId: number, now: number, test = false): Promise<SaleOutcome> {
  const customer = await findCustomer(trx, { clickId: input.clickId, customerKey: input.customerKey }, programId, test);
  checkSaleCustomer(customer, programId);
  // The program's terms and the customer's partner-program relationship, in one read.
  // The program exists: its key (or its synthetic chain) named it.
  const program = (await firstRow<ProgramTerms>(trx, PROGRAM_TERMS, [customer.partnerId ?? -1, programId]))!;
  checkEnrollment(customer, program);
  if (!attributed(customer, program, input)) return UNATTRIBUTED;
  // The first sale converts the customer, only if no other has: on PostgreSQL concurrent units
  // (the Stripe intake's) may all have read it unconverted, and the one whose update changes the
  // row has the first sale while the others count as later sales — so a first-sale-only program
  // pays once, as the sale route's own statement ensures (db/pg-tracking.ts). A sale without a
  // partner converts nothing (7.5 stores it, then refuses).
  const converted = customer.convertedAt !== null || (customer.partnerId !== null && (await changedRows(trx, CUSTOMER_CONVERTED, [now, customer.id])) === 0);
  const { type, reason, row } = saleTerms({ ...customer, convertedAt: converted ? (customer.convertedAt ?? now) : null }, program, input, programId, now, test);
  const saleId = await insertSale(trx, row);
  const events: NewEvent[] = test ? [] : [saleCreated(saleId, row, customer, programId, now)];
  // 7.5: the sale is stored before this refusal, so a resend answers 409.
  if (customer.partnerId === null) {
    await appendEvents(trx, events);
    return { kind: 'partner_required' };
  }
  await deps.faults.afterSaleInsert?.();
  let commissionId: number | null = null;
  let amount = 0;
  if (reason === null) {
    const review = test ? [] : reviewReasons(await selfReferralEmails(trx, customer.id, customer.partnerId), input.processorEmail ?? null);
    const commission = { sale_id: saleId, ...commissionTerms(customer, program, type, input, programId, now, review) };
    amount = commission.amount_cents;
    commissionId = await insertId(trx, 'commissions', commission);
    await insertRow(trx, 'platform_fees', { commission_id: commissionId, sale_id: saleId, program_id: programId, ...feeTerms(amount), currency: input.currency, created_at: now });
    events.push(commissionCreated({ id: commissionId, ...commission }, customer, programId, now));
  }
  if (!test) await updatePartnerMetrics(trx, deps, customer.partnerId, programId, input.amountCents!);
  await appendEvents(trx, events);
  return recorded(saleId, input, commissionId, amount, reason);
}

/** A sale of the route waiting for its group commit. */
interface GroupedSale {
  deps: SaleDeps;
  input: SaleInput;
  programId: number;
  now: number;
}

/** Caps a group's arrays (domain/lead.ts, LEAD_GROUP_MAX). */
const SALE_GROUP_MAX = 200;

/**
 * The sale route's unit. On PostgreSQL a real sale goes in a group commit (commitSales): one read
 * for every sale waiting at the time (each one's customer, terms, the partner's e-mail and the ids
 * its writes take: db/pg-tracking.ts) and one write statement, each sale decided by the same checks
 * and terms as recordSale. When a decision rested on an unconverted customer, the write converts
 * it only if still unconverted; if a concurrent sale converted it first, nothing of that sale was
 * written and it is decided again on a fresh read, in the next group. A test-mode sale, a sale of
 * a group PostgreSQL refused (a transaction id stored before, among others), and SQLite
 * (group-committed in its own way) run the transactional path, recordSale.
 */
export async function recordStandaloneSale(deps: SaleDeps & Pick<AppDeps, 'db' | 'atomic' | 'outbox' | 'ops'>, input: SaleInput, programId: number, now: number): Promise<SaleOutcome> {
  if (input.testMode) return deps.atomic((trx) => recordTestSale(trx, input, programId, now));
  const alone = () => deps.atomic((trx) => recordSale(trx, deps, input, programId, now));
  if (isSqlite(deps.db)) return alone();
  const outcome = await saleGroupOf(deps.db, deps.ops.metrics).submit({ deps, input, programId, now });
  if (!outcome) return alone();
  deps.outbox.poke();
  return outcome;
}

/** A sale decided on its read: answered without a write (outside the window), or a write and the answer once it is stored. */
type SaleDecision = { kind: 'answered'; outcome: SaleOutcome } | { kind: 'write'; write: SaleWrite; answer: (metricsCounted: boolean) => SaleOutcome };

async function decideSale(read: SaleRead, { deps, input, programId, now }: GroupedSale): Promise<SaleDecision> {
  const { customer, program } = read;
  checkSaleCustomer(customer, programId);
  checkEnrollment(customer, program);
  if (!attributed(customer, program, input)) return { kind: 'answered', outcome: UNATTRIBUTED };
  const { type, reason, row } = saleTerms(customer, program, input, programId, now, false);
  const saleId = read.saleId!;
  const events = [saleCreated(saleId, row, customer, programId, now)];
  const partnered = customer.partnerId !== null;
  // The point between the sale and its commission in recordSale; here nothing is written yet.
  if (partnered) await deps.faults.afterSaleInsert?.();
  let commission: (ReturnType<typeof commissionTerms> & { id: number; sale_id: number }) | null = null;
  if (reason === null) {
    commission = { id: read.commissionId!, sale_id: saleId, ...commissionTerms(customer, program, type, input, programId, now, reviewReasons(read.emails, input.processorEmail ?? null)) };
    events.push(commissionCreated(commission, customer, programId, now));
  }
  const write: SaleWrite = {
    convertCustomer: partnered && customer.convertedAt === null ? customer.id : null,
    now,
    sale: { id: saleId, ...row },
    partnerId: customer.partnerId,
    commission,
    fee: commission && feeTerms(commission.amount_cents),
    countMetrics: partnered,
    events: events.map(eventRow),
  };
  const answer = (metricsCounted: boolean): SaleOutcome => {
    if (!partnered) return { kind: 'partner_required' };
    if (!metricsCounted) metricsNotUpdated(deps, customer.partnerId!, programId);
    return recorded(saleId, input, commission?.id ?? null, commission?.amount_cents ?? 0, reason);
  };
  return { kind: 'write', write, answer };
}

/**
 * One group of the sale route's sales on PostgreSQL: one read for all, each decided as recordSale
 * decides, one write for all. A sale settles as its answer, as its refusal, as `undefined`
 * (recordSale decides it: PostgreSQL refused a statement of the group — a duplicate transaction id,
 * say — which then wrote nothing), or goes round again: when an earlier sale of the group converts
 * its customer or has its transaction id, or when its customer was converted after the read.
 */
async function commitSales(db: Db, sales: GroupedSale[], outcome: BatchOutcome<SaleOutcome | undefined>): Promise<void> {
  const alone = (indexes: number[]) => indexes.forEach((i) => outcome.done(i, undefined));
  await onPgConnection(db, async (conn) => {
    let reads;
    try {
      reads = await readForSales(conn, sales.map((s) => ({ ids: { clickId: s.input.clickId, customerKey: s.input.customerKey }, programId: s.programId, transactionId: s.input.transactionId! })));
    } catch (err) {
      if (!isRefusedStatement(err)) throw err;
      return alone(sales.map((_, i) => i));
    }
    const writes: Array<{ index: number; write: SaleWrite; answer: (metricsCounted: boolean) => SaleOutcome }> = [];
    const converting = new Set<number>();
    const transactions = new Set<string>();
    for (const [index, read] of reads.entries()) {
      let decision: SaleDecision;
      try {
        decision = await decideSale(read, sales[index]!);
      } catch (err) {
        outcome.failed(index, err);
        continue;
      }
      if (decision.kind === 'answered') {
        outcome.done(index, decision.outcome);
        continue;
      }
      const { sale, convertCustomer } = decision.write;
      // Rule 3 where recordSale meets it, at the insert: after the checks and the window.
      if (reads[index]!.storedSaleId !== null) {
        outcome.failed(index, new DuplicateSale(sale.processor_event_id));
        continue;
      }
      // Only a conversion makes the group's later sales of that customer stale: a customer read
      // converted (or without a partner) is decided the same way by every sale of the group.
      if ((sale.customer_id !== null && converting.has(sale.customer_id)) || transactions.has(sale.processor_event_id)) {
        outcome.again(index);
        continue;
      }
      if (convertCustomer !== null) converting.add(convertCustomer);
      transactions.add(sale.processor_event_id);
      writes.push({ index, ...decision });
    }
    if (writes.length === 0) return;
    let written;
    try {
      written = await writeSales(conn, writes.map((w) => w.write));
    } catch (err) {
      if (!isRefusedStatement(err)) throw err;
      return alone(writes.map((w) => w.index));
    }
    for (const { index, write, answer } of writes) {
      // converted_at only ever goes from null to a time, so the next decision cannot be stale.
      if (!written.stored.has(write.sale.id)) outcome.again(index);
      else outcome.done(index, answer(!write.countMetrics || written.counted.has(`${write.partnerId}:${write.sale.program_id}`)));
    }
  });
}

const saleGroupOf = queuePerDatabase<GroupedSale, SaleOutcome | undefined>('sale', SALE_GROUP_MAX, commitSales);

/** An e-mail address compared for self-referral: lower case, without a `+tag` (pat+shop@x is pat@x). */
function comparable(email: string | null | undefined): string | null {
  if (!email) return null;
  const [local, domain] = email.trim().toLowerCase().split('@');
  if (!local || !domain) return null;
  return `${local.split('+')[0]}@${domain}`;
}

interface ReferralEmails {
  partner_email: string | null;
  customer_email: string | null;
}

/** The partner's and the customer's e-mail addresses, in one read: this runs on every paid sale. */
async function selfReferralEmails(trx: Knex.Transaction, customerId: number, partnerId: number): Promise<ReferralEmails | undefined> {
  return firstRow<ReferralEmails>(trx, REFERRAL_EMAILS, [customerId, partnerId]);
}

/**
 * Self-referral (docs/commissions.md "Held for review"): the customer's e-mail (saved by its lead),
 * or the processor's customer e-mail of this payment, is the partner's own.
 */
function reviewReasons(row: ReferralEmails | undefined, processorEmail: string | null): CommissionReviewReason[] {
  const partner = comparable(row?.partner_email);
  if (!partner) return [];
  const reasons: CommissionReviewReason[] = [];
  if (comparable(row?.customer_email) === partner) reasons.push('self_referral_email');
  if (comparable(processorEmail) === partner) reasons.push('self_referral_processor_email');
  return reasons;
}

const metricsNotUpdated = (deps: SaleDeps, partnerId: number, programId: number): void =>
  deps.logger.warn({ partnerId, programId }, 'partner metrics not updated: the revenue total would pass the exact integer range');

/**
 * Rule 5: metrics are best effort — a failure is logged and never fails the sale. On PostgreSQL the
 * update runs in a savepoint of its own, since a failed statement aborts the transaction there; on
 * SQLite a failed statement takes back only its own changes and the transaction goes on, so the
 * savepoint's two statements per sale are not sent. The running revenue total never passes
 * 2^53 − 1 (docs/security.md, "Amounts"): past it a JavaScript number could not hold it exactly,
 * so it stops there and the refusal is logged.
 */
async function updatePartnerMetrics(trx: Knex.Transaction, deps: SaleDeps, partnerId: number, programId: number, amount: number): Promise<void> {
  const count = (q: Knex.Transaction) => changedRows(q, COUNT_SALE, [amount, partnerId, programId, Number.MAX_SAFE_INTEGER - amount]);
  try {
    const updated = isSqlite(trx) ? await count(trx) : await inSavepoint(trx, count);
    if (updated === 0) metricsNotUpdated(deps, partnerId, programId);
  } catch (err) {
    deps.logger.warn({ err }, 'partner metrics update failed');
  }
}

/** 7.5's 409 for a duplicate, naming the sale that holds the transaction id. */
export async function duplicateSaleError(db: Knex, transactionId: string): Promise<ApiError> {
  const sale = await db('sale_events').where({ processor_event_id: transactionId }).first('id');
  return new ApiError(ERRORS.saleDuplicate, {}, { sale_id: sale ? Number(sale.id) : null });
}
