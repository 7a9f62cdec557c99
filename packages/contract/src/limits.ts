/** Part 8 of the spec, plus the values it leaves "not shown" (decided in docs/decisions.md). */
export const LIMITS = {
  rate: {
    click: { points: 60, durationSeconds: 60, per: 'ip' },
    lead: { points: 30, durationSeconds: 60, per: 'ip' },
    /** sale and refund share one bucket */
    saleRefund: { points: 120, durationSeconds: 60, per: 'key' },
    readiness: { points: 30, durationSeconds: 60, per: 'key' },
    cli: { points: 60, durationSeconds: 60, per: 'key' },
    /** Not in the spec (8, rule 4): our choice for approved agent tools. */
    agent: { points: 120, durationSeconds: 60, per: 'key' },
    /** Not in the spec: dashboard API per signed-in client address. */
    dashboard: { points: 300, durationSeconds: 60, per: 'ip' },
    /**
     * Not in the spec: the Stripe intake (docs/stripe.md), per intake address (a connection's own
     * endpoint id; the shared address and unknown ids count per client address). 3,000 a minute is
     * 50 events a second held for a whole minute, more than one Stripe account sends outside a bulk
     * operation, and a refusal only delays an event (Stripe retries); it bounds the signature checks
     * one address can cause to 50 a second (each at most one HMAC over 512 KiB, about 1.5 ms).
     */
    stripeWebhook: { points: 3000, durationSeconds: 60, per: 'endpoint' },
    /** Not in the spec: the partner portal's sign-in and invitation endpoints, per client address (docs/partners.md). */
    portalSignIn: { points: 20, durationSeconds: 900, per: 'ip' },
    /** Not in the spec: the public application form (docs/partners.md, "Applications"), per client address. */
    portalApply: { points: 10, durationSeconds: 3600, per: 'ip' },
  },
  syntheticChainsPerHour: 10,
  attributionWindowDaysDefault: 60,
  occurredAtMaxAgeDays: 30,
  occurredAtMaxFutureSeconds: 5 * 60,
  providerPaymentIdMaxLength: 255,
  /**
   * Largest `amount_cents` of a sale (docs/security.md, "Amounts"): 10^12 minor units
   * (10,000,000,000.00 USD or EUR; 1,000,000,000,000 VND). A larger amount answers the spec's own
   * 400 `amount_cents is required and must be a positive integer`. The bound keeps every amount,
   * commission and running total an exact integer in JavaScript numbers and in both databases.
   */
  maxAmountMinor: 1_000_000_000_000,
  /** Largest `commission_rate` of the percent types (10× the sale), so a commission stays exact. */
  percentCommissionRateMax: 1000,
  /** Largest `commission_rate` of the fixed types, in major units of the sale's currency. */
  fixedCommissionRateMax: 1_000_000_000,
  cliLoginSessionSeconds: 5 * 60,
  eventListingWindowMultiplier: 3,
  eventListingDefaultPageSize: 10,
  eventListingMaxPageSize: 100,
  /** Commissions approved or declined in one request, in one transaction (docs/commissions.md). */
  commissionBulkMax: 100,
  commissionListMaxPageSize: 200,
  commissionHoldDaysDefault: 30,
  commissionHoldDaysMax: 365,
  payoutMinimumMax: 1_000_000,
  /** PayPal Payouts Web takes at most 5,000 payments per file; Wise batches at most 1,000. */
  paypalPayoutRowsPerFile: 5000,
  wiseBatchRowsPerFile: 1000,
  /** Largest accepted JSON body; larger answers 413. */
  maxJsonBodyBytes: 64 * 1024,
  programKeyRandomLength: 40,
  clickIdRandomLength: 24,
  /** Random base62 characters of a Stripe connection's intake address id (`whe_…`, ~190 bits). */
  webhookEndpointIdRandomLength: 32,
  maskedKeyVisibleChars: 4,
} as const;

export type RateBucket = keyof typeof LIMITS.rate;

export const CURRENCIES = ['USD', 'EUR', 'VND'] as const;
export type Currency = (typeof CURRENCIES)[number];
/** Minor units per major unit; VND has no minor unit. */
export const CURRENCY_MINOR_UNITS: Record<Currency, number> = { USD: 100, EUR: 100, VND: 1 };

/** Allowed `provider` values of the sale call (the spec keeps them out of the error text). */
export const SALE_PROVIDERS = ['stripe', 'paddle', 'lemonsqueezy', 'chargebee', 'braintree', 'paypal', 'manual', 'other'] as const;

export const COMMISSION_TYPES = ['percent', 'fixed', 'recurring_percent', 'recurring_fixed'] as const;
export type CommissionType = (typeof COMMISSION_TYPES)[number];

export const LEAD_AUTH_MODES = ['server_required', 'browser_allowed'] as const;
export type LeadAuth = (typeof LEAD_AUTH_MODES)[number];

export const REFUND_REASONS = ['refund', 'chargeback'] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export const EVENT_TYPES = ['click', 'lead', 'conversion'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const TEST_EVENT_TYPES = ['click', 'lead', 'sale'] as const;

export const CUSTOMER_STATUSES = ['click', 'lead'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

/** `declined`: an owner refused it (with a reason); it is never paid. */
export const COMMISSION_STATUSES = ['pending', 'approved', 'paid', 'reversed', 'declined'] as const;
export type CommissionStatus = (typeof COMMISSION_STATUSES)[number];

/** Workspace roles and what each may do (design: "Server"). */
export const ROLES = ['owner', 'member', 'restricted'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = ['programs:read', 'programs:write', 'keys:manage', 'partners:read', 'partners:write', 'payments:write', 'tracking:list', 'agent_keys:manage', 'audit:read', 'commissions:read', 'commissions:manage', 'webhooks:manage'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  member: ['programs:read', 'partners:read', 'tracking:list', 'commissions:read'],
  restricted: ['programs:read'],
};

/** Scopes an agent key can carry (5.6). */
export const AGENT_SCOPES = ['programs:read', 'programs:write', 'commissions:read', 'webhooks:manage'] as const;
export type AgentScope = (typeof AGENT_SCOPES)[number];

export const DASHBOARD_SESSION_COOKIE = 'reftrack_session';
export const DASHBOARD_SESSION_DAYS = 14;

/** Partner codes and short links created through the API: letters, digits, - and _. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9_-]{1,100}$/;
