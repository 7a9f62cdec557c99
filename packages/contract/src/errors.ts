/**
 * The error catalogue of spec part 7 as data. Every message a client can match on lives here and
 * nowhere else; servers, SDK and CLI import it.
 */
import { BRAND } from './brand.js';
import { LIMITS } from './limits.js';
import { STATS_GROUP_BY, STATS_LIMITS } from './stats.js';

/** `name` of the platform envelope, by HTTP status (7.1). 405, 408, 413, 415, 421, 429, 431 and 503 are ours (not in the spec). */
export const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'UnauthorizedError',
  403: 'ForbiddenError',
  404: 'NotFoundError',
  405: 'MethodNotAllowedError',
  408: 'RequestTimeoutError',
  409: 'ConflictError',
  410: 'GoneError',
  413: 'PayloadTooLargeError',
  415: 'UnsupportedMediaTypeError',
  421: 'MisdirectedRequestError',
  422: 'UnprocessableEntityError',
  429: 'TooManyRequestsError',
  431: 'RequestHeaderFieldsTooLargeError',
  500: 'InternalServerError',
  503: 'ServiceUnavailableError',
};

/**
 * - `platform`: `{data: null, error: {status, name, message, details, code?}}`
 * - `typed`: `{error: {code, message, ...}}` with no `data` key
 */
export type EnvelopeKind = 'platform' | 'typed';

/** Machine codes that appear in `error.code` (and as anchors of the error reference page). */
export const ERROR_CODES = {
  invalidRequest: 'invalid_request',
  noAttribution: 'no_attribution',
  unauthorized: 'unauthorized',
  notFound: 'not_found',
  duplicateTransaction: 'duplicate_transaction',
  unsupportedCurrency: 'unsupported_currency',
  internalError: 'internal_error',
  invalidKey: 'invalid_key',
  rateLimited: 'rate_limited',
  apiKeyRotationRequired: 'api_key_rotation_required',
  linkDisabled: 'link_disabled',
  accountBlocked: 'ACCOUNT_BLOCKED',
} as const;
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

/** Sale and refund errors always carry a code; this picks it from the status (7.1). */
export const SALE_REFUND_CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  404: 'not_found',
  409: 'duplicate_transaction',
  413: 'invalid_request',
  422: 'unsupported_currency',
  500: 'internal_error',
  503: 'internal_error',
};

export interface ErrorSpec {
  status: number;
  /** Exact message, or a template with `{name}` placeholders filled by `formatMessage`. */
  message: string;
  envelope: EnvelopeKind;
  code?: ErrorCode;
  hint?: string;
}

const cli = BRAND.cli;
const p = (status: number, message: string, code?: ErrorCode): ErrorSpec => ({ status, message, envelope: 'platform', code });
const t = (status: number, code: ErrorCode, message: string, hint?: string): ErrorSpec => ({ status, message, envelope: 'typed', code, hint });

export const ERRORS = {
  // Generic request errors (any route)
  malformedJson: p(400, 'Malformed JSON body'),
  bodyNotObject: p(400, 'Request body must be a JSON object'),
  bodyNulCharacter: p(400, 'Request body must not contain NUL characters (\\u0000)'),
  headersTooLarge: p(431, 'Request headers too large'),
  malformedRequest: p(400, 'Malformed HTTP request'),
  requestTimeout: p(408, 'Request timeout'),
  bodyIncomplete: p(400, 'Request body incomplete: the connection closed before it ended'),
  bodyTooLarge: p(413, `Request body too large (limit ${LIMITS.maxJsonBodyBytes} bytes)`),
  routeNotFound: p(404, 'Not found'),
  methodNotAllowed: p(405, 'Method not allowed'),
  internal: p(500, 'Internal server error'),
  hostNotAllowed: p(421, 'This server does not answer for that Host. Use its public address (PUBLIC_BASE_URL), or have the operator add the name to ALLOWED_HOSTS.'),
  jsonContentTypeRequired: p(415, 'Content-Type must be application/json'),
  serviceUnavailable: p(503, 'Service temporarily unavailable. Retry shortly.'),

  // 5.5 retired key (typed, every endpoint a program key authenticates)
  keyRotationRequired: t(
    401,
    'api_key_rotation_required',
    'This API key was retired on {deadline} and no longer authenticates.',
    'A workspace owner must regenerate the program key in the dashboard, then deploy the new key.',
  ),
  keyRotationWarning: t(
    200,
    'api_key_rotation_required',
    'This API key is marked for mandatory rotation and stops working at {deadline}.',
    'A workspace owner should regenerate the program key in the dashboard and deploy the new key before the deadline.',
  ),

  // 7.7 rate limiting (typed)
  rateLimited: t(429, 'rate_limited', 'Too many requests. Retry after {seconds} seconds.'),

  // 7.3 click
  clickAffiliateUrlRequired: p(400, 'affiliate_url is required'),
  clickInvalidAffiliateUrl: p(400, 'Invalid affiliate_url'),
  clickNoAffParam: p(400, 'No aff parameter found in affiliate_url'),
  clickLinkNotFound: p(400, 'Referral link not found'),
  clickInvalidLinkConfig: p(400, 'Invalid referral link configuration'),
  clickLinkDisabled: t(410, 'link_disabled', 'This referral link has been disabled.', 'The partner or the brand switched this link off; no click was recorded. Ask the partner for a current link.'),
  clickFailed: p(500, 'Click tracking failed'),
  programIdMismatch: p(403, 'program_id does not match the API key'),

  // 7.4 lead
  leadIdRequired: p(400, 'click_id or customer_key is required'),
  leadCustomerNotFound: p(400, 'Customer not found. Provide a valid click_id or customer_key.'),
  leadWrongProgram: p(400, 'Customer does not belong to this program'),
  leadStatus: p(400, 'Customer status cannot be updated to lead. Current status: {status}'),
  leadInvalidToken: p(401, 'Invalid API token'),
  leadFailed: p(500, 'Lead tracking failed'),

  // 5.3 header parsing on sale and refund (codes added by SALE_REFUND_CODE_BY_STATUS)
  authMalformed: p(401, 'Missing or malformed Authorization header. Expected: Bearer <token>', 'unauthorized'),
  authMissingToken: p(401, 'Missing API token', 'unauthorized'),
  authInvalidToken: p(401, 'Invalid API token', 'unauthorized'),

  // 7.5 sale
  saleTransactionId: p(400, 'transaction_id is required and must be a string', 'invalid_request'),
  saleAmount: p(400, 'amount_cents is required and must be a positive integer', 'invalid_request'),
  saleOccurredAt: p(400, 'occurred_at must be an ISO 8601 time within the last 30 days', 'invalid_request'),
  saleProvider: p(400, 'provider must be one of: ...', 'invalid_request'),
  saleProviderPaymentId: p(400, 'provider_payment_id must be a string of 1 to 255 characters', 'invalid_request'),
  saleLivemode: p(400, 'livemode must be a boolean', 'invalid_request'),
  saleCurrency: p(422, 'currency {currency} is not supported', 'unsupported_currency'),
  saleCustomerNotFound: p(400, 'Customer not found. Provide customer_key or click_id.', 'no_attribution'),
  saleOtherProgram: p(400, 'No affiliate attribution found for this customer in this program', 'no_attribution'),
  saleNoPartnerProgram: p(400, 'No partner-program relationship found for this customer', 'no_attribution'),
  salePartnerRequired: p(400, 'partnerId required to create commission', 'no_attribution'),
  saleDuplicate: p(409, 'Duplicate transaction_id. This sale has already been recorded.', 'duplicate_transaction'),
  saleFailed: p(500, 'Sale tracking failed', 'internal_error'),
  saleCommissionFailed: p(500, 'Failed to create commission', 'internal_error'),

  // 7.5 refund
  refundTransactionId: p(400, 'transaction_id is required', 'invalid_request'),
  refundReason: p(400, 'reason must be refund or chargeback', 'invalid_request'),
  refundRefundReason: p(400, 'refund_reason must be a string', 'invalid_request'),
  refundNotFound: p(404, 'Sale not found for transaction_id', 'not_found'),
  refundFailed: p(500, 'Refund tracking failed', 'internal_error'),

  // 4.5 / 5.3 readiness (typed)
  readinessMalformed: t(401, 'invalid_key', 'Missing or malformed Authorization header. Expected: Bearer <api_token>.'),
  readinessMissing: t(401, 'invalid_key', 'Missing API token.'),
  readinessInvalid: t(401, 'invalid_key', 'Invalid API token.'),
  readinessFailed: t(500, 'internal_error', 'Failed to compute readiness. Retry shortly.'),

  // 7.6 CLI
  cliAuthStartFailed: p(500, 'Failed to start auth session (request_id: {request_id})'),
  cliCallbackMissing: p(400, 'Missing required fields: state, id_token'),
  cliCallbackNotFound: p(404, 'Session not found or already used'),
  cliCallbackExpired: p(400, 'Session expired'),
  cliAccountBlocked: p(403, 'Your account has been suspended.'),
  cliCallbackFailed: p(500, 'Auth callback failed (request_id: {request_id})'),
  cliPollMissingState: p(400, 'Missing state parameter'),
  cliPollNotFound: p(404, 'Session not found'),
  cliPollConsumed: p(400, 'Session already consumed'),
  cliPollFailed: p(500, 'Failed to poll auth session (request_id: {request_id})'),
  // Ours (additive): POST /api/v1/cli/auth/logout revokes the login token it is sent.
  cliLogoutMissingAuth: p(401, 'Missing Authorization header. Send the login token to revoke as Bearer <token>.'),
  cliLogoutInvalidToken: p(401, 'Unknown or expired login token: there is nothing to revoke.'),
  cliLogoutFailed: p(500, 'Failed to revoke the login token (request_id: {request_id})'),
  cliInitAuthRequired: p(401, `Authentication required — run \`${cli} login\` first`),
  cliInitInvalidToken: p(401, `Invalid or expired token — run \`${cli} login\` again`),
  cliInitUserNotFound: p(401, `User not found — run \`${cli} login\` again`),
  cliInitNoAdvertiser: p(403, `No advertiser found for this account — run \`${cli} login\` again`),
  cliInitAdvertiserMismatch: p(403, 'advertiser_id does not match the authenticated account'),
  cliInitMissingFields: p(400, 'Missing required fields: name, domain, commission_type, commission_rate'),
  cliInitCommissionType: p(400, 'Invalid commission_type: {value}. Valid: percent, fixed, recurring_percent, recurring_fixed'),
  cliInitCommissionRate: p(400, 'commission_rate must be a positive number'),
  cliInitFailed: p(500, 'Failed to create program (request_id: {request_id})'),
  cliProgramsMissingAuth: p(401, `Missing Authorization header. Run \`${cli} login\` first.`),
  cliProgramsInvalidToken: p(401, `Invalid or expired token. Run \`${cli} login\` to refresh.`),
  cliProgramsUserNotFound: p(401, 'User not found'),
  cliProgramsFailed: p(500, 'Failed to list programs (request_id: {request_id})'),
  cliKeyMalformed: p(401, 'Missing or malformed Authorization header. Expected: Bearer <api_token>'),
  cliKeyMissing: p(401, 'Missing API token'),
  cliKeyInvalid: p(401, 'Invalid API key. If the key was regenerated, use the new one; a workspace owner can regenerate it in the dashboard (Program settings → API key).'),
  cliStatusFailed: p(500, 'Failed to get status (request_id: {request_id})'),
  cliTestEventType: p(400, 'Invalid event_type: {value}. Valid: click, lead, sale'),
  cliChainCap: t(429, 'rate_limited', `Too many synthetic chains (max ${LIMITS.syntheticChainsPerHour}/program/hour).`),
  cliChainFailed: p(500, 'Failed to run synthetic chain (request_id: {request_id})'),
  cliTestEventFailed: p(500, 'Failed to process test event (request_id: {request_id})'),
  // POST /api/v1/cli/programs/:id/key (design: `reftrack keys generate`): the dashboard's key route for the login token.
  cliProgramKeyReplaceInvalid: p(400, 'replace must be true or false'),
  cliProgramKeyAlreadyShown: p(409, 'This program\'s key was already shown once. A new key stops it at once: send replace: true to replace it.'),
  cliProgramKeyFailed: p(500, 'Failed to generate the program key (request_id: {request_id})'),
  // The demo shop of `start --demo` (design): POST /demo/shop/signup and /demo/shop/buy.
  demoShopInput: p(400, 'The demo shop needs the click id to sign up, and the customer key from the sign-up to buy'),
  cliStripeConnectRetired: p(410, 'This endpoint is retired. Connect the payment processor in the dashboard: Program settings → Payments.'),

  // Sign-in and dashboard sessions (design: identity)
  idTokenRequired: p(400, 'id_token is required'),
  idTokenInvalid: p(401, 'Invalid or expired id_token'),
  idTokenReplayed: p(401, 'This id_token was already used to sign in; sign in again'),
  idTokenNonceMismatch: p(401, 'This id_token was not issued for this sign-in (its nonce is missing or different); sign in again'),
  accountBlocked: p(403, 'Your account has been suspended.'),
  idTokenEmailUnverified: p(403, 'Your identity provider has not verified this e-mail address (email_verified is not true), so it cannot be matched to an account; verify it at your provider and sign in again'),
  idTokenNoEmail: p(403, 'Your identity provider sent no e-mail address; a first sign-in needs one (request the email scope)'),
  identityConflict: p(403, 'This e-mail address belongs to an account already bound to another identity at your provider; ask a workspace owner or the operator'),
  identityProviderUnavailable: p(503, 'The identity provider cannot be reached or is misconfigured; retry shortly (request_id: {request_id})'),
  sessionRequired: p(401, 'Sign in required'),
  programKeyNotAccepted: p(401, 'A program key is not accepted here; sign in to the dashboard'),
  crossSiteRefused: p(403, 'Cross-site request refused'),
  permissionDenied: p(403, 'Your role in this workspace does not allow this ({permission} required)'),
  ownerRequired: p(403, 'Only a workspace owner can generate or regenerate the program key'),
  workspaceNotFound: p(404, 'Workspace not found'),
  programNotFound: p(404, 'Program not found'),
  partnerNotFound: p(404, 'Partner not found'),
  linkNotFound: p(404, 'Referral link not found'),
  cliTokenNotFound: p(404, 'CLI token not found'),
  agentKeyNotFound: p(404, 'Agent key not found'),
  programIdInvalid: p(400, 'programId must be a positive integer'),
  programNameInvalid: p(400, 'name must be a non-empty string of at most 200 characters'),
  programDomainInvalid: p(400, 'domain must be a host name such as example.com'),
  percentRateTooHigh: p(400, `commission_rate of a percent commission type must be at most ${LIMITS.percentCommissionRateMax}`),
  attributionWindowInvalid: p(400, 'attribution_window_days must be an integer from 1 to 365'),
  leadAuthInvalid: p(400, 'lead_auth must be server_required or browser_allowed'),
  noFieldsToUpdate: p(400, 'No updatable fields given'),
  partnerFieldsMissing: p(400, 'Missing required fields: name, code'),
  partnerCodeInvalid: p(400, 'code must be 1 to 100 characters of letters, digits, - or _'),
  partnerCodeTaken: p(409, 'Partner code is already taken'),
  partnerEmailInvalid: p(400, 'email must be an e-mail address'),
  linkFieldsMissing: p(400, 'Missing required fields: short_link, partner_id'),
  shortLinkInvalid: p(400, 'short_link must be 1 to 100 characters of letters, digits, - or _'),
  shortLinkTaken: p(409, 'short_link is already taken'),
  activeInvalid: p(400, 'active must be a boolean'),
  stripeAccountInvalid: p(400, 'stripe_account_id must start with acct_'),
  webhookSecretInvalid: p(400, 'webhook_secret must start with whsec_'),

  // Outbound webhooks (docs/webhooks.md): endpoints in the dashboard and agent API
  webhookEndpointNotFound: p(404, 'Webhook endpoint not found'),
  webhookDeliveryNotFound: p(404, 'Webhook delivery not found'),
  webhookUrlInvalid: p(400, `url must be an absolute http:// or https:// URL of at most 2048 characters, without user name or password`),
  webhookEventTypesInvalid: p(400, 'event_types must be a non-empty array of: {types}'),
  webhookPartnerEventTypesInvalid: p(400, 'A partner endpoint can subscribe only to: {types}'),
  webhookProgramInvalid: p(400, 'program_id must be a program of this workspace, or null'),
  webhookPartnerInvalid: p(400, 'partner_id must be a partner enrolled in a program of this workspace, or null'),
  webhookEnabledInvalid: p(400, 'enabled must be a boolean'),
  webhookDescriptionInvalid: p(400, 'description must be a string of at most 200 characters, or null'),
  webhookPartnerFixed: p(400, 'partner_id cannot be changed; create another endpoint'),
  webhookEndpointLimit: p(409, 'This workspace has the most webhook endpoints allowed ({max}); delete one first'),

  // The partner portal (docs/partners.md)
  invitationEmailMissing: p(400, 'This partner has no e-mail address; give email to invite them'),
  invitationInvalid: p(400, 'This invitation link is not valid: it was already used, it expired, or it was replaced by a newer one. Ask the program owner to invite you again.'),
  portalEmailInvalid: p(400, 'email must be an e-mail address'),
  portalSignInLinkInvalid: p(400, 'This sign-in link is not valid: it was already used or it expired. Ask for a new one.'),
  portalSessionRequired: p(401, 'Sign in to the partner portal'),
  portalPartnerNotFound: p(404, 'Partner not found'),
  portalStatsProgramInvalid: p(400, 'program_id must name a program this partner is enrolled in'),
  portalStatsGroupByInvalid: p(400, 'group_by must be link in the partner portal'),
  portalTooManyRequests: p(429, 'Too many sign-in requests; wait a few minutes and try again'),
  mailboxNotFound: p(404, 'Message not found'),

  // Applications and link requests (docs/partners.md)
  applicationsClosed: p(404, 'This program is not open for applications'),
  applicationNameInvalid: p(400, 'name must be 1 to 200 characters'),
  applicationEmailInvalid: p(400, 'email must be an e-mail address'),
  applicationWebsiteInvalid: p(400, 'website must be an http:// or https:// address of at most 2048 characters, or empty'),
  applicationPromotionInvalid: p(400, 'promotion must say how you will promote the program (1 to 2000 characters)'),
  applicationNotFound: p(404, 'Application not found'),
  decisionStatusInvalid: p(400, 'status must be one of: pending, approved, declined'),
  applicationDecided: p(409, 'This application was already {status}'),
  decisionReasonInvalid: p(400, 'reason must be a string of at most 500 characters'),
  decisionNotifyInvalid: p(400, 'notify must be a boolean'),
  portalSettingsInvalid: p(400, 'applications_open and link_requests_open must be booleans'),
  linkRequestsClosed: p(403, 'This program does not take link requests; ask its owner for a link'),
  linkRequestProgramInvalid: p(400, 'program_id must be a program this partner record is enrolled in'),
  linkRequestNoteInvalid: p(400, 'note must be a string of at most 500 characters'),
  linkRequestLimit: p(409, 'You have {max} link requests waiting for an answer; wait for the owner to answer them'),
  linkRequestNotFound: p(404, 'Link request not found'),
  linkRequestDecided: p(409, 'This link request was already {status}'),

  // 4.6 event listing
  eventsPageInvalid: p(400, 'page must be a positive integer'),
  eventsPageSizeInvalid: p(400, `pageSize must be an integer from 1 to ${LIMITS.eventListingMaxPageSize}`),
  eventsTypeInvalid: p(400, 'eventType must be one of: click, lead, conversion'),
  eventsDateFromInvalid: p(400, 'dateFrom must be an ISO 8601 date or time'),
  eventsDateToInvalid: p(400, 'dateTo must be an ISO 8601 date or time'),
  eventsDateRange: p(400, 'dateFrom must not be after dateTo'),
  eventsFailed: p(500, 'Failed to list tracking events'),
  eventsBotsInvalid: p(400, 'bots must be one of: include, exclude, only'),

  // The stats API (docs/analytics.md)
  statsFromInvalid: p(400, 'from must be an ISO 8601 date or time'),
  statsToInvalid: p(400, 'to must be an ISO 8601 date or time'),
  statsRangeInvalid: p(400, `from must be before to, and the range at most ${STATS_LIMITS.rangeMaxDays} days`),
  statsHourRangeTooLong: p(400, `An hourly series covers at most ${STATS_LIMITS.hourRangeMaxDays} days; choose interval=day or month`),
  statsIntervalInvalid: p(400, 'interval must be one of: hour, day, month'),
  statsTimeZoneInvalid: p(400, 'tz must be an IANA time zone, such as Europe/Paris'),
  statsGroupByInvalid: p(400, `group_by must be one of: ${STATS_GROUP_BY.join(', ')}`),
  statsPartnerInvalid: p(400, 'partner_id must be a positive integer'),
  statsLinkInvalid: p(400, 'link_id must be a positive integer'),
  statsFilterInvalid: p(400, 'Filter by at most one of: partner_id, link_id, or one dimension ({dimensions})'),
  statsCombinationUnsupported: p(400, 'group_by={group_by} cannot be combined with the {filter} filter: dimensions are rolled up for the whole program'),

  // Commissions and payouts (docs/commissions.md)
  commissionNotFound: p(404, 'Commission not found'),
  payoutNotFound: p(404, 'Payout not found'),
  payoutBatchNotFound: p(404, 'Payout batch not found'),
  commissionStatusInvalid: p(400, 'status must be one of: pending, approved, paid, reversed, declined'),
  commissionCurrencyInvalid: p(400, 'currency must be a supported three-letter currency code, such as USD'),
  commissionPartnerInvalid: p(400, 'partner_id must be a positive integer'),
  commissionFromInvalid: p(400, 'from must be an ISO 8601 date or time'),
  commissionToInvalid: p(400, 'to must be an ISO 8601 date or time'),
  commissionRangeInvalid: p(400, 'from must not be after to'),
  commissionLimitInvalid: p(400, `limit must be an integer from 1 to ${LIMITS.commissionListMaxPageSize}`),
  commissionCursorInvalid: p(400, 'cursor must be the next_cursor of an earlier page'),
  commissionIdsInvalid: p(400, `ids must be a list of 1 to ${LIMITS.commissionBulkMax} commission ids`),
  commissionDeclineReasonRequired: p(400, 'reason is required to decline a commission (1 to 500 characters)'),
  commissionHoldDaysInvalid: p(400, 'commission_hold_days must be an integer from 0 to 365'),
  payoutMinimumInvalid: p(400, 'payout_minimum must be an integer from 0 to 1000000 (major units of each currency)'),
  payoutMethodInvalid: p(400, 'method must be one of: paypal, wise, manual'),
  payoutReferenceInvalid: p(400, 'reference must be 1 to 100 printable characters'),
  payoutReferenceTaken: p(409, 'reference is already used by another payout of this program'),
  payoutNothingPayable: p(409, 'Nothing to pay: this partner has no positive approved balance in {currency} (approved commissions net of claw-backs)'),
  payoutBelowMinimum: p(409, 'The approved balance ({amount} {currency}) is below the program\'s payout minimum ({minimum} {currency})'),
  payoutBatchEmpty: p(409, 'No partner has an approved balance at or above the payout minimum'),
  payoutStatusInvalid: p(400, 'status must be one of: sent, failed'),
  payoutTransitionInvalid: p(409, 'A {from} payout cannot become {to} (created → sent or failed; sent → failed)'),
  payoutExportFormatInvalid: p(400, 'format must be paypal or wise'),
  payoutExportPartInvalid: p(400, 'part must be a whole number from 1 to {parts} (the number of files this batch and currency need)'),
  payoutExportCurrencyRequired: p(400, 'currency is required: a payout file holds one currency'),
  payoutDetailsInvalid: p(400, '{problem}'),
  payoutDetailsMissing: p(409, 'These partners have no {format} payout details: {partners}. Add them (Partners → payout details) and export again.'),

  // 5.6 agent API
  agentKeyMalformed: p(401, 'Missing or malformed Authorization header. Expected: Bearer <agent_key>'),
  agentKeyInvalid: p(401, 'Invalid agent key'),
  agentProgramKeyRefused: p(401, 'A program key cannot be used on agent endpoints; use an agent key (agt_...)'),
  agentScopeMissing: p(403, 'This agent key lacks the {scope} scope'),

  // 6.1 payment-processor intake (POST /api/v1/webhooks/stripe and /api/v1/webhooks/stripe/:endpointId)
  stripeSignatureMissing: p(400, 'Missing Stripe-Signature header'),
  stripeSignatureInvalid: p(400, 'Invalid Stripe signature: no connected program\'s signing secret verifies this event'),
  stripeEventInvalid: p(400, 'Invalid Stripe event: id, type and data.object are required'),
  stripeEndpointNotFound: p(404, 'Unknown Stripe intake address. Copy the current webhook URL (intake_url) from the program\'s Payments page; it changes when Stripe is disconnected and connected again.'),
  stripeEventUnrouted: p(
    400,
    'This event names no connected program: neither its account nor its metadata.program_id matches a connection. Send events to the connection\'s own intake address (intake_url on the program\'s Payments page).',
  ),
  stripeAccountAmbiguous: p(
    400,
    'Several programs are connected to this event\'s account and its metadata.program_id names none of them. Send events to each connection\'s own intake address (intake_url on the program\'s Payments page).',
  ),
  stripeWebhookFailed: p(500, 'Stripe webhook processing failed'),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorKey = keyof typeof ERRORS;

/** Fills `{name}` placeholders of a message template. Unknown placeholders stay as written. */
export function formatMessage(template: string, params: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** Human descriptions of each code, for the error reference page and the docs. */
export const ERROR_CODE_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: 'A sale or refund request failed validation. Fix the field named in the message; do not resend unchanged.',
  no_attribution: 'The customer carries no usable attribution for this program (unknown customer, another program, no partner). The sale is not commissioned.',
  unauthorized: 'No usable program key on a sale or refund call. Fix the Authorization header or the key.',
  not_found: 'The sale to refund does not exist in this program.',
  duplicate_transaction: 'A sale was already recorded under this transaction_id (globally). Treat as success; the recorded sale id is in error.details.sale_id.',
  unsupported_currency: 'The currency is not one of USD, EUR, VND. Nothing was created.',
  internal_error: 'The server failed. Retry with backoff (readiness: wait retry_after_seconds).',
  invalid_key: 'The readiness call had no usable program key.',
  rate_limited: 'Too many requests in the current window. Wait Retry-After seconds (also retry_after_seconds in the body), then retry.',
  api_key_rotation_required: 'The program key is marked for mandatory rotation (warnings, Deprecation/Sunset headers) or, after the deadline, retired (401). A workspace owner regenerates the key; the old one stops at once.',
  link_disabled: 'The referral link is switched off. No click was recorded.',
  ACCOUNT_BLOCKED: 'The account is suspended and cannot sign in.',
};
