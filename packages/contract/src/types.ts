/** Request and response shapes of spec parts 2 and 4 (and the design's decisions on "not shown"). */
import type { NoCommissionReason } from './commissions.js';
import type { CommissionStatus, CommissionType, CustomerStatus, EventType, LeadAuth, RefundReason } from './limits.js';

export interface Program {
  id: number;
  name: string;
  domain: string;
  commission_type: CommissionType;
  commission_rate: number;
  attribution_window_days: number;
  lead_auth: LeadAuth;
  api_token_masked: string | null;
}

export interface ReferralLink {
  id: number;
  short_link: string;
  partner_id: number | null;
  program_id: number | null;
  clicks: number;
  last_clicked: string | null;
  active: boolean;
}

export interface Customer {
  click_id: string;
  customer_key: string | null;
  customer_status: CustomerStatus;
  program_id: number;
  partner_id: number | null;
}

export interface TestModeData {
  test_mode?: boolean;
  program_id?: number;
}

export interface ClickRequest {
  affiliate_url: string;
  page_url?: string;
  page_title?: string;
  referrer_url?: string;
  session_id?: string;
  screen_resolution?: string;
  viewport_size?: string;
  language?: string;
  timezone?: string;
  existing_click_id?: string;
  /** The user-agent field; falls back to the HTTP `User-Agent` header. */
  user_agent?: string;
  additional_data?: TestModeData;
}

export interface ClickResponse {
  success: true;
  click_id: string;
  partner_code: string;
  cookie_window_days: number;
}

export interface TestClickResponse {
  success: true;
  message: string;
  data: { eventId: number; programId: number; test_mode: true };
}

export interface LeadRequest {
  click_id?: string;
  customer_key?: string;
  /** Optional e-mail of the signed-up user; used to match processor events to the lead (6.1 rule 3). */
  email?: string;
  session_id?: string;
  page_url?: string;
  additional_data?: TestModeData;
}

export interface LeadResponse {
  success: true;
  provisional?: true;
  data: { click_id: string | null; customer_status: CustomerStatus; lead_id: number; test_mode?: true };
}

export interface SaleRequest {
  transaction_id?: string;
  amount_cents?: number;
  customer_key?: string;
  click_id?: string;
  currency?: string;
  occurred_at?: string;
  provider?: string;
  provider_payment_id?: string;
  livemode?: boolean;
  /** Raw names of the SDK's isRecurring, saleType and subscriptionId. */
  is_recurring?: boolean;
  sale_type?: string;
  subscription_id?: string;
  additional_data?: { test_mode?: boolean; [key: string]: unknown };
}

export interface SaleAttributedData {
  attributed: true;
  sale_id: number;
  transaction_id: string;
  commission_id: number | null;
  commission_amount_cents: number;
  currency: string;
  /** Additive (docs/commissions.md): why no commission was created; null when one was. */
  commission_reason: NoCommissionReason | null;
}

export interface SaleNotAttributedData {
  attributed: false;
  reason: 'attribution_window_expired';
}

export interface TestSaleData {
  test_mode: true;
  sale_id: number;
  transaction_id: string;
  /** Additive: a test sale pays no commission. */
  commission_reason: 'test_mode';
}

export interface SaleResponse {
  success: true;
  data: SaleAttributedData | SaleNotAttributedData | TestSaleData;
}

export interface RefundRequest {
  transaction_id: string;
  reason?: RefundReason;
  refund_reason?: string;
}

export interface RefundResponse {
  success: true;
  data: {
    refund_id: number;
    sale_id: number;
    transaction_id: string;
    reason: RefundReason;
    commission_id: number | null;
    commission_status: CommissionStatus | null;
    adjustment_amount_cents: number;
  };
}

export interface ReadinessItem {
  key: 'click_seen' | 'lead_seen' | 'sale_seen' | 'test_event_seen' | 'processor_connected' | 'key_status';
  label: string;
  done: boolean;
  next_step: string | null;
}

export interface ReadinessResponse {
  success: true;
  data: {
    program_id: number;
    ready: boolean;
    key_status: 'active' | 'marked';
    rotate_by: string | null;
    checklist: ReadinessItem[];
  };
}

export interface RotationWarning {
  code: 'api_key_rotation_required';
  message: string;
  hint: string;
  rotate_by: string;
  docs_url: string;
}

export interface NormalizedEventBase {
  id: number;
  event_type: EventType;
  timestamp: string;
  click_id: string | null;
  createdAt: string;
  /** Additive (docs/commissions.md): the partner the event is attributed to, null when none. */
  partner: { id: number; code: string } | null;
}
export interface ClickEvent extends NormalizedEventBase {
  event_type: 'click';
  session_id: string | null;
  page_url: string | null;
  referrer_url: string | null;
  geo_country: string | null;
  geo_region: string | null;
  geo_city: string | null;
  device_type: string | null;
  device_os: string | null;
  browser_name: string | null;
  converted: boolean;
}
export interface LeadEvent extends NormalizedEventBase {
  event_type: 'lead';
  customer_key: string | null;
  session_id: string | null;
  page_url: string | null;
  converted: boolean;
}
export interface ConversionEvent extends NormalizedEventBase {
  event_type: 'conversion';
  amount_cents: number;
  currency: string;
  sale_type: string | null;
  payment_status: string | null;
  processor_event_id: string;
  is_recurring: boolean;
  /** Additive: refunds and chargebacks recorded for the sale since (payment_status stays as reported at sale time). */
  refund_status: SaleRefundStatus;
  refunded_amount_cents: number;
}
/** `charged_back` when any chargeback was recorded; `refunded` when the refunds reach the amount. */
export type SaleRefundStatus = 'none' | 'partially_refunded' | 'refunded' | 'charged_back';
export type NormalizedEvent = ClickEvent | LeadEvent | ConversionEvent;

export interface EventListResponse {
  data: NormalizedEvent[];
  meta: { pagination: { page: number; pageSize: number; pageCount: number; total: number } };
}

/** Platform error envelope (7.1). */
export interface PlatformErrorBody {
  data: null;
  error: { status: number; name: string; message: string; details: Record<string, unknown>; code?: string };
}

/** Typed error envelope (7.1). */
export interface TypedErrorBody {
  success?: false;
  message?: string;
  error: { code: string; message: string; [extra: string]: unknown };
}

/* CLI routes (4.7); success bodies are the design's decisions. */

export interface CliAuthStartResponse {
  success: true;
  data: { state: string; login_url: string; expires_at: string; poll_interval_seconds: number; /** Shown by the CLI and on the login page's confirmation (not in spec 4.7: success bodies are not shown). */ pairing_code?: string };
}

export type CliAuthPollData =
  | { status: 'pending'; expires_at: string }
  | { status: 'complete'; token: string; account: { email: string; name: string | null } }
  | { status: 'expired' };

export interface CliAuthPollResponse {
  success: true;
  data: CliAuthPollData;
}

/** POST /api/v1/cli/auth/logout (ours): the login token sent as Bearer is revoked; answered again if it already was. */
export interface CliAuthLogoutResponse {
  success: true;
  data: { revoked: true; revoked_at: string };
}

export interface CliInitRequest {
  name: string;
  domain: string;
  commission_type: string;
  commission_rate: number;
  advertiser_id?: number;
  attribution_window_days?: number;
  lead_auth?: string;
}

export interface CliInitResponse {
  success: true;
  data: {
    program: Program & { advertiser_id: number };
    /** How to obtain the key: creation never reveals it (5.1). */
    api_key_instructions: string;
    next_steps: string[];
  };
}

export interface CliProgramsResponse {
  success: true;
  /** `api_key_revealed_at` as in ProgramView (absent from servers before it existed). */
  data: Array<Program & { advertiser_id: number; api_key_revealed_at?: string | null }>;
}

/** POST /api/v1/cli/programs/:id/key. Without `replace: true` a key that was already shown is kept (409). */
export interface CliProgramKeyRequest {
  replace?: boolean;
}

export interface CliProgramKeyResponse {
  success: true;
  data: {
    program_id: number;
    /** The whole key: shown in this answer only. */
    api_key: string;
    api_token_masked: string | null;
    /** Whether a key that had been shown was replaced (it stopped working at this moment). */
    replaced: boolean;
    note: string;
  };
}

export interface CliStatusResponse {
  success: true;
  data: {
    program: Program & { advertiser_id: number | null };
    key: { state: 'active' | 'marked'; rotate_by: string | null };
    readiness: ReadinessResponse['data'];
  };
}

export interface CliTestEventResponse {
  success: true;
  data: { event_type: 'click' | 'lead' | 'sale'; event_id: number; test_mode: true; click_id?: string; transaction_id?: string };
}

export interface ChainStep {
  step: 'click' | 'lead' | 'sale';
  ok: boolean;
  status: number;
  duration_ms: number;
  detail: Record<string, unknown>;
}

export interface CliChainResponse {
  success: true;
  data: { chain_id: string; passed: boolean; steps: ChainStep[]; chains_remaining_this_hour: number };
}
