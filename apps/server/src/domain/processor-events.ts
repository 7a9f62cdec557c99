/**
 * What each Stripe event does (spec 6.1, 3.1), inside the transaction that also stores the event's
 * dedup row. Sales go through the sale rules (domain/sale.ts: attribution window, commission,
 * platform fee, global transaction-id idempotency); lead settlement through the lead rules
 * (domain/lead.ts, source `processor`); reversals through domain/refund.ts. So the events of
 * each change are written exactly as for the tracking API.
 *
 * An event that cannot be acted on for good (no attribution, unknown sale, unsupported currency…)
 * is an answer, not an error: `action: 'ignored'` with a reason, so Stripe stops redelivering it.
 * Only unexpected failures (database down) throw, roll everything back and answer 5xx.
 */
import type { Knex } from 'knex';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { insertId } from '../db/insert-id.js';
import { isUniqueViolation } from '../db/knex.js';
import { inSavepoint } from '../db/savepoint.js';
import type { Atomic } from '../db/atomic.js';
import { recordSale, DuplicateSale, type SaleDeps, type SaleOutcome } from './sale.js';
import { parseSaleInput, type SaleInput } from './sale-input.js';
import { createLead } from './lead.js';
import { API_REFUND_REF, appendRefundEvents, markReversed, reverseCommission, type CommissionReversal } from './refund.js';
import { rememberProcessorCustomer, resolveStripeCustomer, type StripeIdentity } from './stripe-attribution.js';
import {
  chargeFacts,
  checkoutFacts,
  disputeFacts,
  invoiceFacts,
  invoicePaymentFacts,
  type ReftrackMetadata,
  type StripeEventEnvelope,
} from './stripe-events.js';

export type EventAction = 'recorded' | 'already_recorded' | 'reversed' | 'linked' | 'ignored';

export interface EventOutcome {
  action: EventAction;
  reason?: string;
  saleId?: number;
  /** Extra members of the answer's `data`. */
  data?: Record<string, unknown>;
}

export interface EventContext {
  deps: SaleDeps;
  envelope: StripeEventEnvelope;
  /** The program of the connection whose secret verified the event. */
  programId: number;
  now: number;
}

const ignored = (reason: string, data?: Record<string, unknown>): EventOutcome => ({ action: 'ignored', reason, data });

export async function applyStripeEvent(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const { envelope } = ctx;
  switch (envelope.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return checkoutCompleted(trx, ctx);
    case 'invoice.payment_succeeded':
    // Stripe sends both events for the same invoice to an endpoint subscribed to both, and many
    // endpoints subscribe only to invoice.paid. Both go through one path keyed by the invoice id
    // (the sale's transaction id, unique): whichever arrives first records the sale, the other
    // answers already_recorded, so an invoice is counted once in either order.
    case 'invoice.paid':
      return invoicePaymentSucceeded(trx, ctx);
    case 'invoice_payment.paid':
      return invoicePaymentPaid(trx, ctx);
    case 'charge.refunded':
      return chargeRefunded(trx, ctx);
    case 'charge.dispute.created':
      return disputeCreated(trx, ctx);
    default:
      return ignored('unsupported_event_type');
  }
}

class DuplicateEvent extends Error {}

export interface ReceivedEvent {
  envelope: StripeEventEnvelope;
  programId: number;
  /** A Connect endpoint receives every connected account's events; a connection takes its own. */
  otherAccount: boolean;
  now: number;
}

/**
 * 6.1: a verified event in one transaction — its dedup row (unique per program and event id),
 * its effects, and what was done with it. `duplicate`: the event was received before.
 */
export async function receiveStripeEvent(db: Knex, deps: SaleDeps, received: ReceivedEvent): Promise<EventOutcome | 'duplicate'> {
  const { envelope, programId, now } = received;
  try {
    return await db.transaction(async (trx) => {
      try {
        await trx('processor_events').insert({
          provider: 'stripe',
          event_id: envelope.id,
          type: envelope.type,
          program_id: programId,
          account: envelope.account ?? null,
          livemode: envelope.livemode,
          action: 'processing',
          event_created_at: envelope.createdAt ?? null,
          received_at: now,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new DuplicateEvent();
        throw err;
      }
      const result: EventOutcome = received.otherAccount ? { action: 'ignored', reason: 'other_account' } : await applyStripeEvent(trx, { deps, envelope, programId, now });
      await trx('processor_events')
        .where({ event_id: envelope.id, program_id: programId })
        .update({ action: result.action, reason: result.reason?.slice(0, 64) ?? null, sale_id: result.saleId ?? null });
      return result;
    });
  } catch (err) {
    if (err instanceof DuplicateEvent) return 'duplicate';
    throw err;
  }
}

/** The time of the payment: the given time, else the event's, never in the future. */
function paymentTime(ctx: EventContext, at: number | undefined): number {
  const t = at ?? ctx.envelope.createdAt ?? ctx.now;
  return Math.min(t, ctx.now);
}

// ---------------------------------------------------------------------------------------------
// Sales

interface StripeSale {
  transactionId: string;
  amount: number | undefined;
  currency: string | undefined;
  metadata: ReftrackMetadata;
  identity: StripeIdentity;
  providerPaymentId: string | undefined;
  isRecurring: boolean;
  saleType: string;
  subscriptionId: string | undefined;
  occurredAt: number;
}

function saleInput(sale: StripeSale, clickId: string, now: number): SaleInput | EventOutcome {
  try {
    const input = parseSaleInput(
      {
        transaction_id: sale.transactionId,
        amount_cents: sale.amount,
        currency: sale.currency,
        click_id: clickId,
        provider: 'stripe',
        ...(sale.providerPaymentId ? { provider_payment_id: sale.providerPaymentId } : {}),
        is_recurring: sale.isRecurring,
        sale_type: sale.saleType,
        subscription_id: sale.subscriptionId ?? null,
      },
      now,
    );
    // Stripe redelivers for days and a resend can be older still: the payment time is kept as is.
    return { ...input, occurredAt: sale.occurredAt, processorEmail: sale.identity.email ?? null };
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    return ignored(err.spec === ERRORS.saleCurrency ? 'unsupported_currency' : 'invalid_sale', { message: err.message });
  }
}

/** 3.1: a provisional lead is settled by a qualifying processor payment, through the lead endpoint's path. */
async function settleProvisionalLead(trx: Knex.Transaction, ctx: EventContext, programId: number, customer: { id: number; clickId: string; status: string }, sale: StripeSale): Promise<boolean> {
  if (customer.status !== 'click') return false;
  const provisional = await trx('lead_events').where({ customer_id: customer.id, provisional: true, is_test: false }).first('id');
  if (!provisional) return false;
  try {
    // The lead's unit of work, run in a savepoint of this event's transaction; the verified
    // signing secret stands for the program key.
    const nested: Atomic = (work) => inSavepoint(trx, work);
    await createLead(nested, programId, { clickId: customer.clickId, customerKey: sale.metadata.customerKey, email: sale.identity.email ?? null, sessionId: null, pageUrl: null }, 'processor', ctx.now);
    return true;
  } catch (err) {
    // A concurrent lead call settled it first: the customer is a lead either way.
    if (err instanceof ApiError && err.status < 500) return false;
    throw err;
  }
}

async function recordPayment(trx: Knex.Transaction, ctx: EventContext, sale: StripeSale, settleLead: boolean): Promise<EventOutcome> {
  const { programId } = ctx;
  // 6.1 rule 1: the three keys name the same program; a session of another program is not ours.
  if (sale.metadata.programIdRaw !== undefined && sale.metadata.programId !== programId) return ignored('other_program');
  if (sale.amount === undefined || sale.amount <= 0) return ignored('amount_not_positive');
  const resolved = await resolveStripeCustomer(trx, programId, sale.identity);
  if (!resolved) return ignored('no_attribution');
  const { customer, by } = resolved;
  const input = saleInput(sale, customer.clickId, ctx.now);
  if ('action' in input) return input;

  const leadSettled = settleLead ? await settleProvisionalLead(trx, ctx, programId, customer, sale) : false;
  const base = { transaction_id: sale.transactionId, attributed_by: by, lead_settled: leadSettled };
  let outcome: SaleOutcome;
  try {
    // A savepoint: a refusal inside the sale rules leaves the settled lead and the dedup row intact.
    outcome = await inSavepoint(trx, (sp) => recordSale(sp, ctx.deps, input, programId, ctx.now));
  } catch (err) {
    if (err instanceof DuplicateSale) {
      // 4.3 rule 3 says treat as success: the advertiser may have reported the same payment.
      const existing = await trx('sale_events').where({ processor_event_id: sale.transactionId }).first('id', 'customer_id');
      if (existing && Number(existing.customer_id) === customer.id) await rememberProcessorCustomer(trx, customer.id, sale.identity.processorCustomerId);
      return { action: 'already_recorded', reason: 'duplicate_transaction_id', saleId: existing ? Number(existing.id) : undefined, data: { ...base, sale_id: existing ? Number(existing.id) : null } };
    }
    if (err instanceof ApiError && err.status < 500) return ignored('no_attribution', { ...base, message: err.message });
    throw err;
  }
  if (outcome.kind === 'partner_required') {
    // 7.5: the sale is stored without a commission when the customer has no partner.
    const row = await trx('sale_events').where({ processor_event_id: sale.transactionId }).first('id');
    await rememberProcessorCustomer(trx, customer.id, sale.identity.processorCustomerId);
    return { action: 'recorded', reason: 'partner_required', saleId: Number(row.id), data: { ...base, sale_id: Number(row.id), commission_id: null, commission_reason: 'no_partner' } };
  }
  const data = outcome.response.data as unknown as Record<string, unknown>;
  if (data.attributed === false) return ignored(String(data.reason ?? 'not_attributed'), base);
  await rememberProcessorCustomer(trx, customer.id, sale.identity.processorCustomerId);
  return {
    action: 'recorded',
    saleId: Number(data.sale_id),
    data: { ...base, sale_id: data.sale_id, commission_id: data.commission_id, commission_amount_cents: data.commission_amount_cents, currency: data.currency, commission_reason: data.commission_reason },
  };
}

/** One-off payments: the sale, and the settlement of a provisional lead (3.1). */
async function checkoutCompleted(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const s = checkoutFacts(ctx.envelope.object);
  const identity: StripeIdentity = { clickId: s.metadata.clickId, email: s.email, processorCustomerId: s.customer, customerKey: s.metadata.customerKey };
  if (s.mode === 'subscription') {
    // 3.1: subscription checkouts are left to the invoice event. The session still teaches step 3
    // of the attribution order which processor customer belongs to the attributed customer.
    const resolved = s.metadata.programIdRaw === undefined || s.metadata.programId === ctx.programId ? await resolveStripeCustomer(trx, ctx.programId, identity) : undefined;
    const linked = resolved ? await rememberProcessorCustomer(trx, resolved.customer.id, s.customer) : false;
    return ignored('subscription_checkout_left_to_invoice', linked ? { processor_customer_linked: true } : undefined);
  }
  if (s.mode !== 'payment') return ignored('unsupported_checkout_mode');
  // Delayed payment methods complete later with checkout.session.async_payment_succeeded.
  if (s.paymentStatus !== 'paid') return ignored('payment_not_completed');
  return recordPayment(
    trx,
    ctx,
    {
      // The payment intent is what refunds and disputes name; the session id only when there is none.
      transactionId: s.paymentIntent ?? s.sessionId,
      amount: s.amountTotal,
      currency: s.currency,
      metadata: s.metadata,
      identity,
      providerPaymentId: s.paymentIntent,
      isRecurring: false,
      saleType: 'one_time',
      subscriptionId: undefined,
      occurredAt: paymentTime(ctx, undefined),
    },
    true,
  );
}

async function linkPayment(trx: Knex.Transaction, programId: number, invoiceId: string, refs: Array<string | undefined>, now: number): Promise<void> {
  for (const ref of refs) {
    if (!ref || ref.length > 255) continue;
    await trx('processor_payments').insert({ program_id: programId, payment_ref: ref, invoice_id: invoiceId, created_at: now }).onConflict(['program_id', 'payment_ref']).ignore();
  }
}

/** Subscription payments, first and renewals: the recurring sale from the subscription's metadata. */
async function invoicePaymentSucceeded(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const inv = invoiceFacts(ctx.envelope.object);
  if (!inv.invoiceId) return ignored('invalid_invoice');
  await linkPayment(trx, ctx.programId, inv.invoiceId, [inv.paymentIntent, inv.charge], ctx.now);
  // 6.1 rule 5: a fully discounted or credited cycle is not a sale (the sale rules refuse ≤ 0).
  if (inv.amountPaid === undefined || inv.amountPaid <= 0) return ignored('amount_paid_not_positive');
  return recordPayment(
    trx,
    ctx,
    {
      transactionId: inv.invoiceId,
      amount: inv.amountPaid,
      currency: inv.currency,
      metadata: inv.metadata,
      identity: { clickId: inv.metadata.clickId, email: inv.email, processorCustomerId: inv.customer, customerKey: inv.metadata.customerKey },
      providerPaymentId: inv.paymentIntent ?? inv.charge,
      isRecurring: inv.billingReason === 'subscription_cycle',
      saleType: 'subscription',
      subscriptionId: inv.subscriptionId,
      occurredAt: paymentTime(ctx, inv.paidAt),
    },
    true,
  );
}

/** 2025-03-31+: charges no longer name their invoice; this event tells which payment paid which invoice. */
async function invoicePaymentPaid(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const p = invoicePaymentFacts(ctx.envelope.object);
  if (!p.invoiceId || (!p.paymentIntent && !p.charge)) return ignored('no_payment_reference');
  await linkPayment(trx, ctx.programId, p.invoiceId, [p.paymentIntent, p.charge], ctx.now);
  return { action: 'linked', data: { invoice_id: p.invoiceId, payment_ref: p.paymentIntent ?? p.charge } };
}

// ---------------------------------------------------------------------------------------------
// Refunds and disputes

interface SaleRow {
  id: number;
  program_id: number;
  processor_event_id: string;
  amount_cents: number;
}

/**
 * The sale a charge belongs to, in the event's program: by the transaction id stored for it
 * (payment intent, session or invoice id), by the stored `provider_payment_id`, or through an
 * invoice the payment is linked to (`processor_payments`).
 */
async function findSale(trx: Knex.Transaction, programId: number, refs: Array<string | undefined>): Promise<SaleRow | undefined> {
  const ids = [...new Set(refs.filter((r): r is string => !!r && r.length <= 255))];
  if (ids.length === 0) return undefined;
  const cols = ['id', 'program_id', 'processor_event_id', 'amount_cents'];
  const base = () => trx('sale_events').where({ program_id: programId, is_test: false });
  const direct = (await base().whereIn('processor_event_id', ids).orderBy('id').first(cols)) ?? (await base().whereIn('provider_payment_id', ids).orderBy('id').first(cols));
  if (direct) return { ...direct, amount_cents: Number(direct.amount_cents) } as SaleRow;
  const links = await trx('processor_payments').where({ program_id: programId }).whereIn('payment_ref', ids).select('invoice_id');
  if (links.length === 0) return undefined;
  const viaInvoice = await base().whereIn('processor_event_id', links.map((l) => String(l.invoice_id))).orderBy('id').first(cols);
  return viaInvoice ? ({ ...viaInvoice, amount_cents: Number(viaInvoice.amount_cents) } as SaleRow) : undefined;
}

/** Inserts the refund row; false when this processor reference was already recorded for the sale. */
async function insertRefund(trx: Knex.Transaction, row: Record<string, unknown>): Promise<number | undefined> {
  try {
    return await inSavepoint(trx, (sp) => insertId(sp, 'refunds', row));
  } catch (err) {
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
}

/** The answer for a recorded refund or dispute: what was refunded and what became of the commission. */
function reversed(sale: SaleRow, refundId: number, reason: 'refund' | 'chargeback', refunded: number, fraction: number, reversal: CommissionReversal): EventOutcome {
  return {
    action: 'reversed',
    saleId: sale.id,
    data: {
      refund_id: refundId,
      sale_id: sale.id,
      transaction_id: sale.processor_event_id,
      reason,
      refunded_amount_cents: refunded,
      fraction,
      commission_id: reversal.commissionId,
      commission_status: reversal.status,
      adjustment_amount_cents: reversal.adjustmentCents,
    },
  };
}

async function chargeRefunded(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const c = chargeFacts(ctx.envelope.object);
  const sale = await findSale(trx, ctx.programId, [c.paymentIntent, c.invoice, c.chargeId]);
  if (!sale) return ignored('sale_not_found');
  if (c.amountRefunded <= 0) return ignored('nothing_refunded');
  // `amount_refunded` is cumulative: each event reverses only the part not reversed yet.
  const earlier = await trx('refunds').where({ sale_id: sale.id, reason: 'refund' }).whereNot({ external_ref: API_REFUND_REF }).sum({ total: 'amount_cents' }).first();
  const alreadyRefunded = Number(earlier?.total ?? 0);
  const delta = c.amountRefunded - alreadyRefunded;
  if (delta <= 0) return ignored('refund_already_recorded', { sale_id: sale.id });
  const externalRef = c.latestRefundId ?? `${c.chargeId}:${c.amountRefunded}`;
  const refundId = await insertRefund(trx, {
    sale_id: sale.id,
    program_id: sale.program_id,
    reason: 'refund',
    refund_reason: c.latestRefundReason ?? null,
    amount_cents: delta,
    external_ref: externalRef.slice(0, 255),
    created_at: ctx.now,
  });
  if (refundId === undefined) return ignored('refund_already_recorded', { sale_id: sale.id });
  const denominator = c.amount !== undefined && c.amount > 0 ? c.amount : sale.amount_cents;
  const full = c.amountRefunded >= denominator;
  // Prorated: amount refunded now / amount of the charge (1 = the whole sale).
  const fraction = full && alreadyRefunded === 0 ? 1 : Math.min(1, delta / denominator);
  const reversal = await reverseCommission(trx, sale.id, 'refund', ctx.now, fraction);
  let status = reversal.status;
  // After the last part of a refund the commission is reversed, even when earlier parts were clawed back.
  if (full && reversal.commissionId !== null && status !== 'reversed' && status !== 'declined') {
    await markReversed(trx, reversal.commissionId, ctx.now);
    status = 'reversed';
  }
  await appendRefundEvents(trx, refundId, reversal.previousStatus, ctx.now);
  return reversed(sale, refundId, 'refund', delta, fraction, { ...reversal, status });
}

async function disputeCreated(trx: Knex.Transaction, ctx: EventContext): Promise<EventOutcome> {
  const d = disputeFacts(ctx.envelope.object);
  if (!d.disputeId) return ignored('invalid_dispute');
  const sale = await findSale(trx, ctx.programId, [d.paymentIntent, d.charge]);
  if (!sale) return ignored('sale_not_found');
  const amount = d.amount !== undefined && d.amount > 0 ? Math.min(d.amount, sale.amount_cents) : sale.amount_cents;
  const refundId = await insertRefund(trx, {
    sale_id: sale.id,
    program_id: sale.program_id,
    reason: 'chargeback',
    refund_reason: d.reason ?? null,
    amount_cents: amount,
    external_ref: d.disputeId.slice(0, 255),
    created_at: ctx.now,
  });
  if (refundId === undefined) return ignored('dispute_already_recorded', { sale_id: sale.id });
  const fraction = sale.amount_cents > 0 ? Math.min(1, amount / sale.amount_cents) : 1;
  const reversal = await reverseCommission(trx, sale.id, 'chargeback', ctx.now, fraction);
  await appendRefundEvents(trx, refundId, reversal.previousStatus, ctx.now);
  return reversed(sale, refundId, 'chargeback', amount, fraction, reversal);
}
