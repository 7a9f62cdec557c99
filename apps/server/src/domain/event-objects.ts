/**
 * The objects that domain events carry (packages/contract/src/events.ts), built from what the
 * domain core just wrote: the shapes the dashboard API shows, times as ISO text, no e-mail address.
 */
import type { CommissionObject, CommissionStatus, Currency, LeadObject, RefundObject, RefundReason, SaleObject } from '@reftrack/contract';

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export interface LeadFacts {
  id: number;
  programId: number;
  clickId: string | null;
  customerKey: string | null;
  partnerId: number | null;
  provisional: boolean;
  source: string;
  createdAt: number;
  settledAt: number | null;
}

export const leadObject = (l: LeadFacts): LeadObject => ({
  id: l.id,
  program_id: l.programId,
  click_id: l.clickId,
  customer_key: l.customerKey,
  partner_id: l.partnerId,
  provisional: l.provisional,
  source: l.source,
  created_at: iso(l.createdAt),
  settled_at: isoOrNull(l.settledAt),
});

/** A `sale_events` row (as inserted or as read back) and its customer's partner. */
export function saleObject(id: number, row: Record<string, unknown>, customerKey: string | null, partnerId: number | null): SaleObject {
  return {
    id,
    program_id: Number(row.program_id),
    transaction_id: String(row.processor_event_id),
    amount_cents: Number(row.amount_cents),
    currency: row.currency as Currency,
    click_id: (row.click_id as string | null) ?? null,
    customer_key: customerKey,
    partner_id: partnerId,
    is_recurring: Boolean(row.is_recurring),
    sale_type: (row.sale_type as string | null) ?? null,
    subscription_id: (row.subscription_id as string | null) ?? null,
    provider: (row.provider as string | null) ?? null,
    occurred_at: iso(Number(row.sale_date)),
    created_at: iso(Number(row.created_at)),
  };
}

/** A `commissions` row. */
export function commissionObject(row: Record<string, unknown>): CommissionObject {
  return {
    id: Number(row.id),
    sale_id: Number(row.sale_id),
    program_id: Number(row.program_id),
    partner_id: Number(row.partner_id),
    amount_cents: Number(row.amount_cents),
    currency: row.currency as Currency,
    status: row.status as CommissionStatus,
    hold_until: row.hold_until == null ? null : iso(Number(row.hold_until)),
    status_reason: (row.status_reason as string | null | undefined) ?? null,
    payout_id: row.payout_id == null ? null : Number(row.payout_id),
    created_at: iso(Number(row.created_at)),
    updated_at: iso(Number(row.updated_at)),
  };
}

/** A `refunds` row. */
export function refundObject(id: number, row: Record<string, unknown>, transactionId: string, currency: Currency): RefundObject {
  return {
    id,
    sale_id: Number(row.sale_id),
    transaction_id: transactionId,
    reason: row.reason as RefundReason,
    amount_cents: Number(row.amount_cents),
    currency,
    created_at: iso(Number(row.created_at)),
  };
}
