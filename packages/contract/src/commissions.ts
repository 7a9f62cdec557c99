/**
 * Commissions and payouts (docs/commissions.md): the ledger, review, balances, payouts and the
 * partner's payout details, as the dashboard API and the agent API show them.
 */
import type { CommissionStatus, Currency } from './limits.js';

/** Why a stored sale pays no commission (the sale answer's `commission_reason`, the ledger's sales). */
export const NO_COMMISSION_REASONS = ['first_sale_only', 'no_partner', 'test_mode'] as const;
export type NoCommissionReason = (typeof NO_COMMISSION_REASONS)[number];

/**
 * Why a commission is held for the owner's review instead of approved when its hold passes
 * (docs/commissions.md "Held for review"): the customer's e-mail (from the lead), or the payment
 * processor's customer e-mail, is the partner's own.
 */
export const COMMISSION_REVIEW_REASONS = ['self_referral_email', 'self_referral_processor_email'] as const;
export type CommissionReviewReason = (typeof COMMISSION_REVIEW_REASONS)[number];

/** created → sent, created → failed, sent → failed. A failed payout returns its commissions to `approved`. */
export const PAYOUT_STATUSES = ['created', 'sent', 'failed'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

export const PAYOUT_METHODS = ['paypal', 'wise', 'manual'] as const;
export type PayoutMethod = (typeof PAYOUT_METHODS)[number];

/** The payout-file formats of GET …/payout-batches/:id/export?format=… */
export const PAYOUT_FILE_FORMATS = ['paypal', 'wise'] as const;
export type PayoutFileFormat = (typeof PAYOUT_FILE_FORMATS)[number];

export interface PartnerRef {
  id: number;
  code: string;
  name: string;
}

/** One row of the commission ledger (GET /api/dashboard/programs/:id/commissions). */
export interface LedgerCommission {
  id: number;
  program_id: number;
  sale_id: number;
  transaction_id: string;
  customer_key: string | null;
  partner: PartnerRef;
  /** What the commission paid or pays, before claw-backs. */
  amount_cents: number;
  /** Claw-backs of a refund after payout (negative, or 0). */
  adjustments_cents: number;
  currency: Currency;
  status: CommissionStatus;
  /** Why an owner declined it; null otherwise. */
  status_reason: string | null;
  /** Why it was held for review instead of approved automatically (empty when it was not). */
  review_reasons: CommissionReviewReason[];
  /** When the hold ends and the approval job approves it (a pending commission). */
  hold_until: string | null;
  payout_id: number | null;
  sale_amount_cents: number;
  refunded_amount_cents: number;
  created_at: string;
  updated_at: string;
}

export interface LedgerResponse {
  success: true;
  data: LedgerCommission[];
  /** `next_cursor`: pass as `cursor` for the next page (older rows); null on the last page. */
  meta: { next_cursor: string | null };
}

/** POST …/commissions/approve and …/commissions/decline: what happened to each id. */
export type CommissionReviewResult =
  | { id: number; result: 'approved' | 'declined'; status: CommissionStatus }
  | { id: number; result: 'unchanged'; status: CommissionStatus; message: string }
  | { id: number; result: 'not_found'; status: null; message: string };

export interface CommissionReviewResponse {
  success: true;
  data: CommissionReviewResult[];
}

/** One partner's money in one currency (GET /api/dashboard/programs/:id/balances). Never summed across currencies. */
export interface PartnerBalance {
  partner: PartnerRef;
  currency: Currency;
  pending_cents: number;
  approved_cents: number;
  /** Commissions paid by payouts that were not failed. */
  paid_cents: number;
  /** Claw-backs of refunds after payout (a positive number). */
  clawed_back_cents: number;
  /** Claw-backs not yet settled by a payout: deducted from the next one. */
  open_clawback_cents: number;
  /** approved − open claw-backs: what the next payout would pay (negative: the partner owes). */
  payable_cents: number;
}

export interface BalancesResponse {
  success: true;
  data: PartnerBalance[];
}

export interface PayoutObject {
  id: number;
  program_id: number;
  partner: PartnerRef;
  batch_id: number | null;
  currency: Currency;
  /** commissions_cents + adjustments_cents: what the partner is paid. */
  amount_cents: number;
  commissions_cents: number;
  /** Claw-backs carried into this payout (negative, or 0). */
  adjustments_cents: number;
  commission_count: number;
  method: PayoutMethod;
  reference: string;
  status: PayoutStatus;
  note: string | null;
  created_at: string;
  updated_at: string;
}

export interface PayoutResponse {
  success: true;
  data: PayoutObject;
}

export interface PayoutListResponse {
  success: true;
  data: PayoutObject[];
}

export interface PayoutBatchResponse {
  success: true;
  data: { batch_id: number; payouts: PayoutObject[]; skipped: Array<{ partner: PartnerRef; currency: Currency; payable_cents: number; reason: 'below_minimum' | 'nothing_payable' }> };
}

/** A partner's payout details as the API shows them: never the full account number. */
export interface PayoutDetailsView {
  partner_id: number;
  method: 'paypal' | 'wise';
  /** PayPal: the e-mail; Wise: the account holder and the last four characters of the account. */
  summary: string;
  updated_at: string;
}

/** PUT /api/dashboard/partners/:id/payout-details */
export type PayoutDetailsInput =
  | { method: 'paypal'; paypal_email: string }
  | {
      method: 'wise';
      account_holder: string;
      email: string;
      receiver_type?: 'PRIVATE' | 'BUSINESS';
      iban?: string;
      bic?: string;
      account_number?: string;
      sort_code?: string;
      abartn?: string;
      account_type?: 'CHECKING' | 'SAVINGS';
    };
