/** What the client's methods take and return. Server shapes come from @reftrack/contract. */
import type {
  ClickResponse,
  Currency,
  LeadResponse,
  ReadinessResponse,
  RefundReason,
  RefundResponse,
  RotationWarning,
  SALE_PROVIDERS,
  SaleResponse,
  TestSaleData,
} from '@reftrack/contract';
import type { RequestOptions } from './options.js';

/** Every result says which request it came from and what rotation warnings came with it. */
export interface ResultMeta {
  requestId: string | null;
  warnings: RotationWarning[];
}

/** At least one of the two identifies the customer (4.2). */
export type TrackLeadParams = {
  /** The `reftrack_click_id` cookie value, forwarded by your front end. */
  clickId?: string;
  /** Your stable user id; the same value later goes into `trackSale` and Stripe metadata (6.1 rule 6). */
  customerExternalId?: string;
  email?: string;
} & ({ clickId: string } | { customerExternalId: string });

export interface TrackLeadOptions extends RequestOptions {
  /** Report the "already a lead" 400 of spec 7.4 as a result instead of throwing it. */
  ignoreAlreadyLead?: boolean;
}

export type TrackLeadResult =
  | (ResultMeta & { alreadyLead: false; provisional: boolean; data: LeadResponse['data'] })
  | (ResultMeta & { alreadyLead: true; status: string });

/** Upper- or lower-case; the server also accepts other codes and answers 422 for them. */
export type CurrencyCode = Currency | Lowercase<Currency> | (string & {});

export type SaleProvider = (typeof SALE_PROVIDERS)[number];

export type TrackSaleParams = {
  /** Idempotency key of the sale (`transaction_id`), globally unique: use your invoice or order id. */
  invoiceId: string;
  /** Positive integer in the currency's smallest unit (cents; whole dong for VND). */
  amount: number;
  /** Default `usd`. */
  currency?: CurrencyCode;
  customerExternalId?: string;
  clickId?: string;
  isRecurring?: boolean;
  saleType?: string;
  subscriptionId?: string;
  /** When the payment happened: within the last 30 days, at most 5 minutes ahead. */
  occurredAt?: Date | string;
  provider?: SaleProvider;
  providerPaymentId?: string;
  livemode?: boolean;
  additionalData?: Record<string, unknown>;
} & ({ customerExternalId: string } | { clickId: string });

/**
 * `duplicate: true` is the 409 of 4.3 rule 3: a sale was already recorded under this invoiceId
 * (by an earlier call or an earlier attempt of this one). It is a success, and `saleId` is always
 * the id of the recorded sale (a 409 without it is not a Reftrack answer: the SDK throws `APIError`).
 */
export type TrackSaleResult =
  | (ResultMeta & { duplicate: false; data: SaleResponse['data'] })
  | (ResultMeta & { duplicate: true; saleId: number; transactionId: string });

export interface TrackRefundParams {
  /** The `invoiceId` the sale was reported with. */
  invoiceId: string;
  reason?: RefundReason;
  /** Free text. */
  refundReason?: string;
}

export type TrackRefundResult = ResultMeta & { data: RefundResponse['data'] };

export type ReadinessResult = ResultMeta & { data: ReadinessResponse['data'] };

export type TestSaleResult = ResultMeta & { data: TestSaleData };

export interface TrackClickParams {
  /** Full URL carrying the `aff` query parameter. */
  affiliateUrl: string;
  userAgent?: string;
  referrerUrl?: string;
  pageUrl?: string;
  /** The visitor's current click id; the server reuses its customer (first-click attribution). */
  existingClickId?: string;
}

export type TrackClickResult = ResultMeta & Omit<ClickResponse, 'success'>;
