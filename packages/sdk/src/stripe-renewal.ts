/**
 * Renewals for advertisers who report sales through the sale endpoint themselves (spec 6.1 rule 5).
 * Feed it the verified `invoice.paid` event; it reports each subscription renewal once, keyed by
 * the invoice id, so Stripe's redeliveries are answered as duplicates instead of counted again.
 *
 * Do not use it when the Stripe account is connected in the dashboard: the service then captures
 * renewals itself and reporting them here too would count them twice (6.1 rule 4).
 */
import { BRAND, LIMITS } from '@reftrack/contract';
import type { Reftrack } from './client.js';
import { assertKnownKeys, assertPlainObject, type RequestOptions } from './options.js';
import type { TrackSaleParams, TrackSaleResult } from './types.js';

type Expandable = string | { id: string } | null | undefined;
type Metadata = Record<string, string> | null | undefined;

/** The parts of a Stripe invoice this helper reads; both API shapes (before and after 2025-03-31). */
export interface StripeInvoiceLike {
  id: string;
  billing_reason?: string | null;
  amount_paid?: number | null;
  currency?: string | null;
  livemode?: boolean | null;
  /** 2025-03-31 and later. */
  parent?: { subscription_details?: { metadata?: Metadata; subscription?: Expandable } | null } | null;
  /** Before 2025-03-31. */
  subscription_details?: { metadata?: Metadata } | null;
  /** Before 2025-03-31. */
  subscription?: Expandable;
  status_transitions?: { paid_at?: number | null } | null;
  /** Before 2025-03-31. */
  payment_intent?: Expandable;
  /** Before 2025-03-31. */
  charge?: Expandable;
  /** 2025-03-31 and later. */
  payments?: { data?: Array<{ payment?: { payment_intent?: Expandable; charge?: Expandable } | null }> | null } | null;
}

export interface StripeEventLike {
  id?: string;
  type: string;
  livemode?: boolean;
  data: { object: unknown };
}

export type StripeRenewalSkipReason =
  | 'not_invoice_paid'
  | 'not_subscription_cycle'
  | 'non_positive_amount'
  | 'no_reftrack_metadata'
  | 'other_program';

export type StripeRenewalResult =
  | { action: 'reported'; invoiceId: string; sale: TrackSaleParams; result: TrackSaleResult }
  | { action: 'skipped'; reason: StripeRenewalSkipReason; detail: string; invoiceId: string | null };

export interface StripeRenewalOptions {
  /**
   * This client's program id. When set, renewals whose subscription metadata names another
   * `program_id` are skipped, for accounts that run several programs.
   */
  programId?: number;
  request?: RequestOptions;
}

const EVENT_TYPE = 'invoice.paid';
const SUBSCRIPTION_CYCLE = 'subscription_cycle';

function idOf(value: Expandable): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof value.id === 'string') return value.id;
  return undefined;
}

/** A metadata value from the current location first, the legacy one second (6.1 rule 5). */
function metadataValue(invoice: StripeInvoiceLike, key: string): string | undefined {
  for (const metadata of [invoice.parent?.subscription_details?.metadata, invoice.subscription_details?.metadata]) {
    const value = metadata?.[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return undefined;
}

function paymentId(invoice: StripeInvoiceLike): string | undefined {
  const payment = invoice.payments?.data?.[0]?.payment;
  return idOf(payment?.payment_intent) ?? idOf(payment?.charge) ?? idOf(invoice.payment_intent) ?? idOf(invoice.charge);
}

/**
 * `occurred_at` must be within the last 30 days (4.3). A redelivery older than that still reports
 * the renewal, without its payment time, rather than being refused; an hour of margin absorbs clock skew.
 */
function occurredAt(invoice: StripeInvoiceLike, now: number): Date | undefined {
  const paidAt = invoice.status_transitions?.paid_at;
  if (typeof paidAt !== 'number' || paidAt <= 0) return undefined;
  const oldestMs = now - LIMITS.occurredAtMaxAgeDays * 86_400_000 + 3_600_000;
  return paidAt * 1000 >= oldestMs ? new Date(paidAt * 1000) : undefined;
}

function checkRenewalOptions(options: unknown): void {
  assertPlainObject('reportStripeRenewal options', options);
  assertKnownKeys('reportStripeRenewal options', options, ['programId', 'request'], 'option');
  if (options.programId !== undefined && !Number.isInteger(options.programId)) {
    throw new TypeError('reportStripeRenewal options.programId must be an integer.');
  }
}

export async function reportStripeRenewal(client: Reftrack, event: StripeEventLike, options: StripeRenewalOptions = {}): Promise<StripeRenewalResult> {
  assertPlainObject('reportStripeRenewal event', event);
  checkRenewalOptions(options);
  const invoice = event.data?.object as StripeInvoiceLike | undefined;
  const invoiceId = typeof invoice?.id === 'string' ? invoice.id : null;
  const skip = (reason: StripeRenewalSkipReason, detail: string): StripeRenewalResult => ({ action: 'skipped', reason, detail, invoiceId });

  if (event.type !== EVENT_TYPE || !invoice || invoiceId === null) return skip('not_invoice_paid', `event type is ${event.type}, not ${EVENT_TYPE}`);
  // The first payment of a subscription is reported at checkout; only the cycles after it are renewals.
  if (invoice.billing_reason !== SUBSCRIPTION_CYCLE) {
    return skip('not_subscription_cycle', `billing_reason is ${String(invoice.billing_reason)}, not ${SUBSCRIPTION_CYCLE}`);
  }
  const amount = invoice.amount_paid ?? 0;
  // The sale call refuses a non-positive amount (a fully discounted or credited cycle).
  if (!(amount > 0)) return skip('non_positive_amount', `amount_paid is ${amount}`);

  const customerExternalId = metadataValue(invoice, BRAND.metadataCustomerKey);
  const clickId = metadataValue(invoice, BRAND.metadataClickId);
  if (customerExternalId === undefined && clickId === undefined) {
    return skip('no_reftrack_metadata', `subscription metadata has neither ${BRAND.metadataCustomerKey} nor ${BRAND.metadataClickId}`);
  }
  const programId = metadataValue(invoice, BRAND.metadataProgramId);
  if (options.programId !== undefined && programId !== undefined && programId !== String(options.programId)) {
    return skip('other_program', `${BRAND.metadataProgramId} is ${programId}, this client reports for ${options.programId}`);
  }

  const identity = customerExternalId !== undefined ? { customerExternalId, clickId } : { clickId: clickId as string };
  const sale: TrackSaleParams = {
    ...identity,
    invoiceId,
    amount,
    currency: invoice.currency ?? undefined,
    isRecurring: true,
    subscriptionId: idOf(invoice.parent?.subscription_details?.subscription) ?? idOf(invoice.subscription),
    occurredAt: occurredAt(invoice, Date.now()),
    provider: 'stripe',
    providerPaymentId: paymentId(invoice),
    livemode: invoice.livemode ?? event.livemode,
  };
  // The returned `sale` shows what was sent; fields Stripe left empty are not part of it.
  for (const key of Object.keys(sale) as Array<keyof TrackSaleParams>) if (sale[key] === undefined) delete sale[key];

  const result = await client.trackSale(sale, options.request);
  return { action: 'reported', invoiceId, sale, result };
}
