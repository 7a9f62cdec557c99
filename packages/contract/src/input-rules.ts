/**
 * Rules of request fields that both the server's validators (apps/server/src) and the OpenAPI
 * document's request schemas (openapi-requests.ts) read, so the document cannot drift from what
 * the server accepts. The patterns are plain ECMAScript regular expressions without flags: a
 * JSON Schema `pattern` takes their `.source` as is.
 */
export const INPUT_RULES = {
  programNameMaxLength: 200,
  attributionWindowDaysMax: 365,
  /** Sale and refund `transaction_id`. */
  transactionIdMaxLength: 255,
  declineReasonMaxLength: 500,
  /** A payout's `note` is cut to this length, never refused. */
  payoutNoteMaxLength: 500,
  /** A payout's `reference`: printable ASCII (it goes into payout files). */
  payoutReference: /^[\x20-\x7e]{1,100}$/,
  stripeAccountId: /^acct_[A-Za-z0-9]{1,100}$/,
  stripeWebhookSecret: /^whsec_[A-Za-z0-9+/=_-]{1,200}$/,
  /** A partner's contact address in the dashboard. */
  partnerEmail: /^[^@\s]{1,200}@[^@\s]{1,200}$/,
  /** A partner person's address in the portal (compared lower-cased). */
  portalEmail: /^[^@\s,"<>]{1,200}@[^@\s,"<>]{1,200}\.[^@\s,"<>]{2,63}$/,
  portalEmailMaxLength: 320,
  /** One-time sign-in and invitation tokens as mailed. */
  portalTokenMinLength: 20,
  portalTokenMaxLength: 200,
  /**
   * Free text stored with a tracking event: cut to this many characters, never refused (a value
   * that is not text is dropped).
   */
  storedText: {
    page_url: 2048,
    referrer_url: 2048,
    page_title: 512,
    session_id: 255,
    screen_resolution: 32,
    viewport_size: 32,
    language: 35,
    timezone: 64,
    user_agent: 1024,
    email: 320,
    sale_type: 64,
    subscription_id: 255,
    refund_reason: 2000,
  },
  /** Payout details (docs/commissions.md): bank identifiers as checked, without spaces, upper-case. */
  payoutDetails: {
    email: /^[^@\s,"]{1,200}@[^@\s,"]{1,200}\.[^@\s,"]{2,63}$/,
    emailMaxLength: 254,
    accountHolderMaxLength: 140,
    iban: /^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$/,
    bic: /^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$/,
    accountNumber: /^[A-Z0-9]{4,34}$/,
    sortCode: /^[0-9]{6}$/,
    abartn: /^[0-9]{9}$/,
  },
} as const;
