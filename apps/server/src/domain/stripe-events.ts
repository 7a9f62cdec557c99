/**
 * Readers for the Stripe objects the processor intake (6.1) acts on. Pure functions over the
 * verified event's JSON: they accept both API shapes (before and after 2025-03-31, spec part 9),
 * expanded or plain ids, and missing fields, and return only what the intake needs.
 */
import { BRAND } from '@reftrack/contract';

type Json = Record<string, unknown>;
export type Metadata = Record<string, string>;

const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const nonEmpty = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);

/** A Stripe id given as a string or as an expanded object `{id}`. */
export function idOf(value: unknown): string | undefined {
  if (typeof value === 'string') return nonEmpty(value);
  return nonEmpty(obj(value)?.id);
}

function metadataOf(value: unknown): Metadata | undefined {
  const m = obj(value);
  if (!m) return undefined;
  const out: Metadata = {};
  for (const [k, v] of Object.entries(m)) if (typeof v === 'string') out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The Reftrack keys of a metadata object (design.md "Names"). */
export interface ReftrackMetadata {
  clickId?: string;
  customerKey?: string;
  /** `program_id` when it is a plain positive integer; `programIdRaw` keeps what was written. */
  programId?: number;
  programIdRaw?: string;
}

export function reftrackMetadata(metadata: Metadata | undefined): ReftrackMetadata {
  if (!metadata) return {};
  const raw = nonEmpty(metadata[BRAND.metadataProgramId]);
  return {
    clickId: nonEmpty(metadata[BRAND.metadataClickId]),
    customerKey: nonEmpty(metadata[BRAND.metadataCustomerKey]),
    programId: raw && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined,
    programIdRaw: raw,
  };
}

export interface StripeEventEnvelope {
  id: string;
  type: string;
  /** `acct_…` for an event of a connected account; absent for the account's own endpoint. */
  account?: string;
  livemode: boolean | null;
  /** Epoch ms of `event.created`, if present. */
  createdAt?: number;
  object: Json;
}

/** The envelope of a verified event, or undefined when it lacks id, type or data.object. */
export function readEnvelope(event: unknown): StripeEventEnvelope | undefined {
  const e = obj(event);
  const id = nonEmpty(e?.id);
  const type = nonEmpty(e?.type);
  const object = obj(obj(e?.data)?.object);
  if (!e || !id || !type || !object || id.length > 255 || type.length > 100) return undefined;
  const created = int(e.created);
  return {
    id,
    type,
    account: nonEmpty(e.account),
    livemode: typeof e.livemode === 'boolean' ? e.livemode : null,
    createdAt: created !== undefined && created > 0 ? created * 1000 : undefined,
    object,
  };
}

/**
 * The `program_id` an event's object names in its metadata, read from the raw (not yet verified)
 * payload: on the shared intake address it chooses the one connection whose signing secret is
 * checked, and is never trusted on its own.
 */
export function programIdHint(event: unknown): number | undefined {
  const object = obj(obj(obj(event)?.data)?.object);
  if (!object) return undefined;
  const invoice = object.object === 'invoice' ? invoiceMetadata(object) : undefined;
  return reftrackMetadata(invoice ?? metadataOf(object.metadata)).programId;
}

export interface CheckoutFacts {
  sessionId: string;
  mode: string | undefined;
  paymentStatus: string | undefined;
  amountTotal: number | undefined;
  currency: string | undefined;
  paymentIntent: string | undefined;
  /** `cus_…` */
  customer: string | undefined;
  email: string | undefined;
  metadata: ReftrackMetadata;
}

export function checkoutFacts(session: Json): CheckoutFacts {
  return {
    sessionId: nonEmpty(session.id) ?? '',
    mode: nonEmpty(session.mode),
    paymentStatus: nonEmpty(session.payment_status),
    amountTotal: int(session.amount_total),
    currency: nonEmpty(session.currency),
    paymentIntent: idOf(session.payment_intent),
    customer: idOf(session.customer),
    email: normalizeEmail(obj(session.customer_details)?.email ?? session.customer_email),
    metadata: reftrackMetadata(metadataOf(session.metadata)),
  };
}

/** Subscription metadata: `invoice.parent.subscription_details` (2025-03-31+) first, legacy second. */
function invoiceMetadata(invoice: Json): Metadata | undefined {
  return metadataOf(obj(obj(invoice.parent)?.subscription_details)?.metadata) ?? metadataOf(obj(invoice.subscription_details)?.metadata);
}

export interface InvoiceFacts {
  invoiceId: string;
  amountPaid: number | undefined;
  currency: string | undefined;
  billingReason: string | undefined;
  subscriptionId: string | undefined;
  customer: string | undefined;
  email: string | undefined;
  /** Epoch ms of `status_transitions.paid_at`, if present. */
  paidAt: number | undefined;
  /** The payment intent (or charge) that paid it: `payments` (2025-03-31+, when included), legacy fields second. */
  paymentIntent: string | undefined;
  charge: string | undefined;
  metadata: ReftrackMetadata;
}

export function invoiceFacts(invoice: Json): InvoiceFacts {
  const payments = obj(invoice.payments)?.data;
  const firstPayment = Array.isArray(payments) ? obj(obj(payments[0])?.payment) : undefined;
  const paidAt = int(obj(invoice.status_transitions)?.paid_at);
  return {
    invoiceId: nonEmpty(invoice.id) ?? '',
    amountPaid: int(invoice.amount_paid),
    currency: nonEmpty(invoice.currency),
    billingReason: nonEmpty(invoice.billing_reason),
    subscriptionId: idOf(obj(obj(invoice.parent)?.subscription_details)?.subscription) ?? idOf(invoice.subscription),
    customer: idOf(invoice.customer),
    email: normalizeEmail(invoice.customer_email),
    paidAt: paidAt !== undefined && paidAt > 0 ? paidAt * 1000 : undefined,
    paymentIntent: idOf(firstPayment?.payment_intent) ?? idOf(invoice.payment_intent),
    charge: idOf(firstPayment?.charge) ?? idOf(invoice.charge),
    metadata: reftrackMetadata(invoiceMetadata(invoice)),
  };
}

export interface InvoicePaymentFacts {
  invoiceId: string | undefined;
  paymentIntent: string | undefined;
  charge: string | undefined;
}

/** `invoice_payment.paid` (2025-03-31+): the link between an invoice and the payment that paid it. */
export function invoicePaymentFacts(invoicePayment: Json): InvoicePaymentFacts {
  const payment = obj(invoicePayment.payment);
  return { invoiceId: idOf(invoicePayment.invoice), paymentIntent: idOf(payment?.payment_intent), charge: idOf(payment?.charge) };
}

export interface ChargeFacts {
  chargeId: string;
  amount: number | undefined;
  /** Cumulative over all refunds of the charge. */
  amountRefunded: number;
  paymentIntent: string | undefined;
  /** Legacy API versions only: the invoice the charge paid. */
  invoice: string | undefined;
  /** Newest refund in `charge.refunds` when Stripe includes the list (older API versions). */
  latestRefundId: string | undefined;
  latestRefundReason: string | undefined;
}

export function chargeFacts(charge: Json): ChargeFacts {
  const refunds = obj(charge.refunds)?.data;
  const latest = Array.isArray(refunds) ? obj(refunds[0]) : undefined;
  return {
    chargeId: nonEmpty(charge.id) ?? '',
    amount: int(charge.amount),
    amountRefunded: int(charge.amount_refunded) ?? 0,
    paymentIntent: idOf(charge.payment_intent),
    invoice: idOf(charge.invoice),
    latestRefundId: nonEmpty(latest?.id),
    latestRefundReason: nonEmpty(latest?.reason),
  };
}

export interface DisputeFacts {
  disputeId: string;
  amount: number | undefined;
  charge: string | undefined;
  paymentIntent: string | undefined;
  reason: string | undefined;
}

export function disputeFacts(dispute: Json): DisputeFacts {
  return {
    disputeId: nonEmpty(dispute.id) ?? '',
    amount: int(dispute.amount),
    charge: idOf(dispute.charge),
    paymentIntent: idOf(dispute.payment_intent),
    reason: nonEmpty(dispute.reason),
  };
}

function normalizeEmail(value: unknown): string | undefined {
  const email = nonEmpty(value)?.toLowerCase();
  return email && email.length <= 320 ? email : undefined;
}
