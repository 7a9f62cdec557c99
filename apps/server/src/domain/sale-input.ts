/** Spec 4.3 / 7.5: the sale body validated in the spec's order into a typed value (the sale route, the Stripe intake, the chains). */
import { CURRENCIES, ERRORS, INPUT_RULES, LIMITS, SALE_PROVIDERS, type Currency } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { obj, str, text, type Body } from './json-values.js';
import { parseOccurredAt } from './occurred-at.js';

export interface SaleInput {
  testMode: boolean;
  transactionId?: string;
  amountCents?: number;
  clickId?: string;
  customerKey?: string;
  currency: Currency;
  occurredAt: number;
  provider: string | null;
  providerPaymentId: string | null;
  livemode: boolean | null;
  isRecurring: boolean;
  saleType: string | null;
  subscriptionId: string | null;
  /** The payment processor's customer e-mail (Stripe intake only), for the self-referral check. */
  processorEmail?: string | null;
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

export function parseSaleInput(body: Body, now: number): SaleInput {
  const testMode = obj(body.additional_data)?.test_mode === true;

  const rawTxn = body.transaction_id;
  if (!testMode || present(rawTxn)) {
    if (typeof rawTxn !== 'string' || !rawTxn.trim() || rawTxn.length > INPUT_RULES.transactionIdMaxLength) fail(ERRORS.saleTransactionId);
  }
  const rawAmount = body.amount_cents;
  if (!testMode || present(rawAmount)) {
    // LIMITS.maxAmountMinor keeps every amount and total exact (docs/security.md, "Amounts").
    if (typeof rawAmount !== 'number' || !Number.isSafeInteger(rawAmount) || rawAmount <= 0 || rawAmount > LIMITS.maxAmountMinor) fail(ERRORS.saleAmount);
  }
  let occurredAt = now;
  if (present(body.occurred_at)) {
    const at = parseOccurredAt(body.occurred_at, now);
    if (at === undefined) fail(ERRORS.saleOccurredAt);
    occurredAt = at;
  }
  let provider: string | null = null;
  if (present(body.provider)) {
    const p = typeof body.provider === 'string' ? body.provider.toLowerCase() : undefined;
    if (!p || !(SALE_PROVIDERS as readonly string[]).includes(p)) fail(ERRORS.saleProvider);
    provider = p;
  }
  let providerPaymentId: string | null = null;
  if (present(body.provider_payment_id)) {
    const v = body.provider_payment_id;
    if (typeof v !== 'string' || v.length < 1 || v.length > LIMITS.providerPaymentIdMaxLength) fail(ERRORS.saleProviderPaymentId);
    providerPaymentId = v;
  }
  let livemode: boolean | null = null;
  if (present(body.livemode)) {
    if (typeof body.livemode !== 'boolean') fail(ERRORS.saleLivemode);
    livemode = body.livemode;
  }
  let currency: Currency = 'USD';
  if (present(body.currency)) {
    const c = String(typeof body.currency === 'object' ? JSON.stringify(body.currency) : body.currency).slice(0, 16);
    const upper = c.toUpperCase();
    if (!(CURRENCIES as readonly string[]).includes(upper)) fail(ERRORS.saleCurrency, { currency: c.toUpperCase() });
    currency = upper as Currency;
  }
  return {
    testMode,
    transactionId: typeof rawTxn === 'string' ? rawTxn.trim() : undefined,
    amountCents: typeof rawAmount === 'number' ? rawAmount : undefined,
    clickId: str(body.click_id),
    customerKey: str(body.customer_key),
    currency,
    occurredAt,
    provider,
    providerPaymentId,
    livemode,
    isRecurring: body.is_recurring === true,
    saleType: text(body.sale_type, INPUT_RULES.storedText.sale_type),
    subscriptionId: text(body.subscription_id, INPUT_RULES.storedText.subscription_id),
  };
}
