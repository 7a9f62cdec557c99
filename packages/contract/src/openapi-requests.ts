/**
 * What each operation of the OpenAPI document takes: its JSON request body and its query
 * parameters, as JSON Schemas (draft 2020-12) written from the server's own validation
 * (apps/server/src/domain/*-input.ts, src/webhooks/endpoint-input.ts, the route handlers) and built
 * from the same constants it reads (limits.ts, input-rules.ts, the enumerations). Keyed by
 * `METHOD path` as the document's `op(...)` lines name operations, so openapi.ts picks a
 * description up without its lines changing.
 *
 * Bodies allow members they do not list (the server ignores unknown members), so an object schema
 * never sets `additionalProperties: false`. apps/server/test/openapi.test.ts sends, for every
 * operation with a body, a body the schema accepts (the server must succeed) and bodies the schema
 * rejects (the server must answer 400).
 */
import { COMMISSION_STATUSES, COMMISSION_TYPES, CURRENCIES, EVENT_TYPES, IDENTIFIER_PATTERN, LEAD_AUTH_MODES, LIMITS, REFUND_REASONS, SALE_PROVIDERS, TEST_EVENT_TYPES } from './limits.js';
import { APPLICATION_LIMITS } from './applications.js';
import { PAYOUT_FILE_FORMATS, PAYOUT_METHODS } from './commissions.js';
import { INPUT_RULES } from './input-rules.js';
import { ROUTES } from './routes.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS } from './webhooks.js';

type Schema = Record<string, unknown>;

export interface RequestDescription {
  /** The JSON body's schema; sent as `application/json`. */
  body?: Schema;
  /** Query parameters: name → schema of the value. */
  query?: Record<string, Schema>;
  /** Query parameters that must be present. */
  requiredQuery?: string[];
}

/* ------------------------------------------------------------------ helpers */

const pattern = (re: RegExp, extra: Schema = {}): Schema => ({ type: 'string', pattern: re.source, ...extra });
const int = (minimum: number, maximum: number, extra: Schema = {}): Schema => ({ type: 'integer', minimum, maximum, ...extra });
const id: Schema = int(1, Number.MAX_SAFE_INTEGER);
/** An id in a body: a number, or its digits as text (the server reads both). */
const bodyId = (extra: Schema = {}): Schema => ({ anyOf: [id, { type: 'string', pattern: '^[0-9]{1,15}$', not: { pattern: '^0+$' } }], ...extra });
/** `re` with white space allowed around it (the server trims before the check). */
const trimmed = (re: RegExp): string => `^\\s*(?:${re.source.replace(/^\^/, '').replace(/\$$/, '')})\\s*$`;
const enumOf = (values: readonly string[], extra: Schema = {}): Schema => ({ type: 'string', enum: [...values], ...extra });
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
/** A string with at least one character that is not white space (the server trims). */
const text = (maxLength?: number, extra: Schema = {}): Schema => ({ type: 'string', pattern: '\\S', ...(maxLength ? { maxLength } : {}), ...extra });
/** An object with `required` members and `optional` ones; other members are ignored by the server. */
const body = (required: Record<string, Schema>, optional: Record<string, Schema> = {}, extra: Schema = {}): Schema => ({
  type: 'object',
  properties: { ...required, ...optional },
  required: Object.keys(required),
  ...extra,
});
/** `abc` → `[Aa][Bb][Cc]`: JSON Schema patterns have no case-insensitive flag. */
const caseless = (word: string): string => [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join('');
/** A currency code, any case (the server upper-cases it). */
const currency: Schema = { type: 'string', pattern: `^(${CURRENCIES.map(caseless).join('|')})$`, description: `One of ${CURRENCIES.join(', ')} (any case).` };

/* ------------------------------------------------------------------ programs */

/** The host, or a pasted URL whose host is kept (scheme, port, path dropped); compared lower-cased. */
const domain: Schema = {
  type: 'string',
  pattern: `^\\s*(${caseless('http')}[Ss]?://)?(${caseless('localhost')}|([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63})(:[0-9]+)?([/?#].*)?\\s*$`,
  maxLength: 2048,
  description: 'The site\'s host name. A pasted URL is reduced to its host.',
};
const rate: Schema = {
  anyOf: [
    { type: 'number', exclusiveMinimum: 0, maximum: LIMITS.fixedCommissionRateMax },
    { type: 'string', pattern: '^\\s*(?=[0-9.]*[1-9])[0-9]+(\\.[0-9]+)?\\s*$', description: 'A decimal number as text is read as that number.' },
  ],
  description: `Greater than 0; at most ${LIMITS.percentCommissionRateMax} (percent types, ten times the sale) or ${LIMITS.fixedCommissionRateMax} (fixed types, major units of the sale's currency).`,
};
const programFields = {
  name: text(INPUT_RULES.programNameMaxLength),
  domain,
  commission_type: enumOf(COMMISSION_TYPES),
  commission_rate: rate,
  attribution_window_days: int(1, INPUT_RULES.attributionWindowDaysMax),
  lead_auth: enumOf(LEAD_AUTH_MODES),
  commission_hold_days: int(0, LIMITS.commissionHoldDaysMax),
  payout_minimum: int(0, LIMITS.payoutMinimumMax, { description: 'Major units of the payout currency.' }),
};
const { name, commission_type, commission_rate, attribution_window_days, lead_auth, commission_hold_days, payout_minimum } = programFields;
/** A percent type caps the rate at LIMITS.percentCommissionRateMax. */
const percentCap: Schema = {
  if: { properties: { commission_type: { enum: ['percent', 'recurring_percent'] } }, required: ['commission_type'] },
  then: { properties: { commission_rate: { anyOf: [{ type: 'number', maximum: LIMITS.percentCommissionRateMax }, { type: 'string' }] } } },
};
/** Creating a program: four required members; the optional ones may be null (left at their defaults). */
const newProgram = (extra: Record<string, Schema>): Schema =>
  body(
    { name, domain, commission_type, commission_rate },
    { attribution_window_days: nullable(attribution_window_days), lead_auth: nullable(lead_auth), commission_hold_days: nullable(commission_hold_days), payout_minimum: nullable(payout_minimum), ...extra },
    percentCap,
  );
/** Changing a program: only the members given change; at least one. */
const programUpdate: Schema = body({}, programFields, { anyOf: Object.keys(programFields).map((k) => ({ required: [k] })), ...percentCap });

/* ------------------------------------------------------------------ webhooks */

const webhookUrl: Schema = { type: 'string', pattern: `^\\s*${caseless('http')}[Ss]?://[^\\s/?#@]+([/?#].*)?$`, maxLength: WEBHOOK_LIMITS.urlMaxLength, description: 'An http(s) URL without user or password.' };
const eventTypes: Schema = { type: 'array', items: enumOf(WEBHOOK_EVENT_TYPES), minItems: 1, description: 'Repeated types count once. An endpoint for a partner takes only the partner\'s types (lead.created, sale.created, commission.created, commission.updated).' };
const description: Schema = nullable({ type: 'string', maxLength: WEBHOOK_LIMITS.descriptionMaxLength });
const endpointCreate: Schema = body(
  { url: webhookUrl, event_types: eventTypes },
  { description, program_id: nullable(id), partner_id: nullable({ ...id, description: 'A partner endpoint (postback): fixed at creation.' }), enabled: { type: 'boolean' } },
);
const endpointUpdateFields = { url: webhookUrl, event_types: eventTypes, description, program_id: nullable(id), enabled: { type: 'boolean' } };
const endpointUpdate: Schema = body({}, endpointUpdateFields, { anyOf: Object.keys(endpointUpdateFields).map((k) => ({ required: [k] })), not: { required: ['partner_id'] } });

/* ------------------------------------------------------------------ commissions and payouts */

const commissionIds: Schema = { type: 'array', items: id, minItems: 1, maxItems: LIMITS.commissionBulkMax };
const payoutMethod = enumOf(PAYOUT_METHODS, { description: 'Defaults to manual.' });
const note: Schema = { type: 'string', description: `Cut to ${INPUT_RULES.payoutNoteMaxLength} characters.` };

const PD = INPUT_RULES.payoutDetails;
/** Free text that goes into payout files: no control characters, not starting with = + - or @. */
const cellText = (maxLength: number): Schema => ({ type: 'string', maxLength, pattern: '^(?!\\s*[=+\\-@])[^\\u0000-\\u001f\\u007f]*\\S[^\\u0000-\\u001f\\u007f]*$' });
const payoutDetails: Schema = {
  oneOf: [
    body({ method: { const: 'paypal' }, paypal_email: { allOf: [cellText(PD.emailMaxLength), pattern(PD.email)] } }),
    body(
      { method: { const: 'wise' }, account_holder: cellText(PD.accountHolderMaxLength), email: { allOf: [cellText(PD.emailMaxLength), pattern(PD.email)] } },
      {
        receiver_type: enumOf(['PRIVATE', 'BUSINESS'], { description: 'Defaults to PRIVATE.' }),
        iban: pattern(PD.iban, { description: 'Spaces are removed and letters upper-cased before the check.' }),
        bic: pattern(PD.bic),
        account_number: pattern(PD.accountNumber),
        sort_code: pattern(PD.sortCode, { description: 'Dashes and spaces are removed before the check (GBP).' }),
        abartn: pattern(PD.abartn, { description: 'ACH routing number (USD).' }),
        account_type: enumOf(['CHECKING', 'SAVINGS']),
      },
      { anyOf: [{ required: ['iban'] }, { required: ['account_number'] }] },
    ),
  ],
};

/* ------------------------------------------------------------------ tracking */

/** Free text stored with an event: cut to `max` characters; a value that is not text is ignored, never refused. */
const kept = (field: keyof typeof INPUT_RULES.storedText, extra: Schema = {}): Schema => ({ type: 'string', description: `Cut to ${INPUT_RULES.storedText[field]} characters; a value that is not text is ignored.`, ...extra });

/** `additional_data.test_mode: true` marks a test event (spec 4.1–4.3). */
const additionalData: Schema = { type: 'object', properties: { test_mode: { type: 'boolean' }, program_id: { anyOf: [id, { type: 'string', pattern: '^[0-9]{1,15}$' }] } } };
const sale: Schema = {
  ...body(
    {},
    {
      transaction_id: { type: 'string', pattern: '\\S', maxLength: INPUT_RULES.transactionIdMaxLength },
      amount_cents: int(1, LIMITS.maxAmountMinor, { description: 'Minor units of `currency`.' }),
      currency: nullable(currency),
      click_id: { type: 'string' },
      customer_key: { type: 'string' },
      occurred_at: nullable({ type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]{1,9})?)?(Z|[+-][0-9]{2}:?[0-9]{2})$', description: `ISO 8601 with an offset, within the last ${LIMITS.occurredAtMaxAgeDays} days, at most ${LIMITS.occurredAtMaxFutureSeconds / 60} minutes ahead.` }),
      provider: nullable({ type: 'string', pattern: `^(${SALE_PROVIDERS.map(caseless).join('|')})$` }),
      provider_payment_id: nullable({ type: 'string', minLength: 1, maxLength: LIMITS.providerPaymentIdMaxLength }),
      livemode: nullable({ type: 'boolean' }),
      is_recurring: { type: 'boolean' },
      sale_type: kept('sale_type'),
      subscription_id: kept('subscription_id'),
      additional_data: additionalData,
    },
  ),
  // transaction_id and amount_cents are required, except in a test event.
  if: { not: { properties: { additional_data: { properties: { test_mode: { const: true } }, required: ['test_mode'] } }, required: ['additional_data'] } },
  then: { required: ['transaction_id', 'amount_cents'], anyOf: [{ required: ['customer_key'] }, { required: ['click_id'] }] },
};

/** A Stripe event as Stripe sends it; the Stripe-Signature header signs the raw body with the connection's webhook secret. */
const stripeEvent: Schema = body(
  { id: text(255), type: text(100), data: body({ object: { type: 'object' } }) },
  { account: { type: 'string', description: 'The connected account (Connect endpoints): picks the connection at the shared address.' }, created: { type: 'integer' }, livemode: { type: 'boolean' } },
  { description: 'A Stripe event, exactly as Stripe sends it, with its `Stripe-Signature` header (the connection\'s webhook secret signs the raw body).' },
);

/* ------------------------------------------------------------------ the table */

const page: Schema = int(1, 100_000, { default: 1 });
const decisionFilter: Schema = enumOf(['pending', 'approved', 'declined'], { description: 'Only this status; absent: every status.' });
const decline = body({}, { reason: nullable({ type: 'string', maxLength: APPLICATION_LIMITS.reasonMax }), notify: { type: 'boolean', default: false, description: 'E-mail the decision.' } }) as Schema & { properties: Record<string, Schema> };
/** Compared trimmed and lower-cased. */
const portalEmail: Schema = { type: 'string', pattern: trimmed(INPUT_RULES.portalEmail), maxLength: INPUT_RULES.portalEmailMaxLength };
const pageSize = (fallback: number): Schema => int(1, LIMITS.eventListingMaxPageSize, { default: fallback });
const deliveriesQuery = { page, pageSize: pageSize(25) };
const ledgerQuery: Record<string, Schema> = {
  partner_id: id,
  status: enumOf(COMMISSION_STATUSES),
  currency,
  from: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}', description: 'An ISO 8601 date or date-time, on the commission\'s creation; inclusive.' },
  to: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}', description: 'An ISO 8601 date or date-time; inclusive.' },
  cursor: { ...id, description: 'meta.next_cursor of the previous page.' },
  limit: int(1, LIMITS.commissionListMaxPageSize, { default: 50 }),
};

export const OPERATION_REQUESTS: Readonly<Record<string, RequestDescription>> = {
  [`POST ${ROUTES.trackClick.path}`]: {
    body: body(
      { affiliate_url: { type: 'string', minLength: 1, description: 'The landing page URL with its `aff` parameter.' } },
      {
        page_url: kept('page_url'),
        page_title: kept('page_title'),
        referrer_url: kept('referrer_url'),
        session_id: kept('session_id'),
        screen_resolution: kept('screen_resolution'),
        viewport_size: kept('viewport_size'),
        language: kept('language'),
        timezone: kept('timezone'),
        user_agent: kept('user_agent', { description: `Defaults to the User-Agent header; cut to ${INPUT_RULES.storedText.user_agent} characters.` }),
        existing_click_id: { type: 'string', description: 'A click id already in the visitor\'s cookie: the customer keeps its first partner and click id.' },
        additional_data: additionalData,
      },
    ),
  },
  [`POST ${ROUTES.trackLead.path}`]: {
    body: body({}, { click_id: { type: 'string' }, customer_key: { type: 'string' }, email: kept('email'), session_id: kept('session_id'), page_url: kept('page_url'), additional_data: additionalData }, {
      anyOf: [{ required: ['click_id'], properties: { click_id: { pattern: '\\S' } } }, { required: ['customer_key'], properties: { customer_key: { pattern: '\\S' } } }],
    }),
  },
  [`POST ${ROUTES.trackSale.path}`]: { body: sale },
  [`POST ${ROUTES.trackRefund.path}`]: {
    body: body({ transaction_id: { type: 'string', pattern: '\\S', maxLength: INPUT_RULES.transactionIdMaxLength } }, { reason: nullable(enumOf(REFUND_REASONS, { default: 'refund' })), refund_reason: nullable(kept('refund_reason')) }),
  },
  [`POST ${ROUTES.stripeWebhook.path}`]: { body: stripeEvent },
  [`POST ${ROUTES.stripeWebhookEndpoint.path}`]: { body: stripeEvent },
  [`GET ${ROUTES.trackingEvents.path}`]: {
    query: {
      page: int(1, 1_000_000, { default: 1 }),
      pageSize: int(1, LIMITS.eventListingMaxPageSize, { default: LIMITS.eventListingDefaultPageSize }),
      eventType: enumOf([...EVENT_TYPES, 'all']),
      dateFrom: { type: 'string', description: 'A date (YYYY-MM-DD) or an ISO 8601 date-time (UTC without an offset); inclusive.' },
      dateTo: { type: 'string', description: 'A date (the whole day, UTC) or an ISO 8601 date-time; inclusive.' },
      bots: enumOf(['include', 'exclude', 'only'], { default: 'include', description: 'Clicks of known bots and link-preview fetchers: listed (include, as spec 4.6 lists every click), left out, or alone (docs/analytics.md).' }),
    },
  },
  [`POST ${ROUTES.cliAuthCallback.path}`]: { body: body({ state: text(), id_token: text() }) },
  [`GET ${ROUTES.cliAuthPoll.path}`]: { query: { state: { type: 'string', minLength: 1 } }, requiredQuery: ['state'] },
  [`POST ${ROUTES.cliInit.path}`]: { body: newProgram({ advertiser_id: nullable({ ...id, description: 'The workspace; defaults to the first one the account owns.' }) }) },
  [`POST ${ROUTES.cliTestEvent.path}`]: {
    body: { anyOf: [body({ event_type: enumOf([...TEST_EVENT_TYPES, 'chain']) }), body({ type: { const: 'chain' } })], description: '`event_type` click, lead or sale records one test event; `chain` runs a synthetic click → lead → sale.' },
  },
  [`POST ${ROUTES.cliProgramKey.path}`]: { body: body({}, { replace: { type: 'boolean', description: 'Replace a key that was already shown.' } }) },
  [`POST ${ROUTES.cliWebhookCreate.path}`]: { body: endpointCreate },
  [`PATCH ${ROUTES.cliWebhookUpdate.path}`]: { body: endpointUpdate },
  [`GET ${ROUTES.cliWebhookDeliveries.path}`]: { query: deliveriesQuery },
  [`PATCH ${ROUTES.agentProgramUpdate.path}`]: { body: programUpdate },
  [`POST ${ROUTES.agentWebhookCreate.path}`]: { body: endpointCreate },
  [`PATCH ${ROUTES.agentWebhookUpdate.path}`]: { body: endpointUpdate },
  [`GET ${ROUTES.agentWebhookDeliveries.path}`]: { query: deliveriesQuery },
  'POST /api/dashboard/session': { body: body({ id_token: text() }) },
  'POST /api/dashboard/programs': { body: newProgram({ workspace_id: bodyId({ description: 'Defaults to the first workspace the account owns.' }) }) },
  'PATCH /api/dashboard/programs/:id': { body: programUpdate },
  'POST /api/dashboard/programs/:id/partners': {
    body: {
      anyOf: [
        body({ partner_id: bodyId({ description: 'Enrol an existing partner of the workspace.' }) }),
        body({ name: text(), code: { type: 'string', pattern: trimmed(IDENTIFIER_PATTERN) } }, { email: nullable({ type: 'string', pattern: trimmed(INPUT_RULES.partnerEmail) }) }, { not: { required: ['partner_id'] } }),
      ],
    },
  },
  'POST /api/dashboard/programs/:id/links': { body: body({ short_link: { type: 'string', pattern: trimmed(IDENTIFIER_PATTERN) }, partner_id: bodyId() }, { active: { type: 'boolean', default: true } }) },
  'PATCH /api/dashboard/links/:id': { body: body({ active: { type: 'boolean' } }) },
  'PUT /api/dashboard/programs/:id/payments': {
    body: body({ stripe_account_id: { type: 'string', pattern: trimmed(INPUT_RULES.stripeAccountId) }, webhook_secret: { type: 'string', pattern: trimmed(INPUT_RULES.stripeWebhookSecret), description: 'The signing secret of the Stripe endpoint; stored encrypted, never shown again.' } }),
  },
  'GET /api/dashboard/programs/:id/commissions': { query: { ...ledgerQuery, format: enumOf(['json', 'csv'], { description: '`csv`: the whole filtered ledger as a CSV file.' }) } },
  'POST /api/dashboard/programs/:id/commissions/approve': { body: body({ ids: commissionIds }) },
  'POST /api/dashboard/programs/:id/commissions/decline': { body: body({ ids: commissionIds, reason: text(INPUT_RULES.declineReasonMaxLength) }) },
  'GET /api/agent/v1/programs/:id/commissions': { query: ledgerQuery },
  'GET /api/dashboard/programs/:id/balances': { query: { partner_id: id } },
  'GET /api/dashboard/programs/:id/payouts': { query: { batch_id: id } },
  'POST /api/dashboard/programs/:id/payouts': {
    body: body({ partner_id: bodyId(), currency }, { method: payoutMethod, reference: nullable({ allOf: [pattern(INPUT_RULES.payoutReference), { pattern: '\\S' }] }), note }),
  },
  'POST /api/dashboard/programs/:id/payout-batches': { body: body({}, { method: payoutMethod, currency: nullable({ ...currency, description: 'Only this currency; every currency when absent.' }) }) },
  'PATCH /api/dashboard/payouts/:id': { body: body({ status: enumOf(['sent', 'failed']) }, { note }) },
  'GET /api/dashboard/payout-batches/:id/export': { query: { format: enumOf(PAYOUT_FILE_FORMATS), currency, part: int(1, 999_999, { default: 1 }) }, requiredQuery: ['format', 'currency'] },
  'PUT /api/dashboard/partners/:id/payout-details': { body: payoutDetails },
  'GET /api/dashboard/workspaces/:id/audit-log': { query: { page, pageSize: pageSize(50) } },
  'POST /api/dashboard/workspaces/:id/webhooks': { body: endpointCreate },
  'PATCH /api/dashboard/webhooks/:id': { body: endpointUpdate },
  'GET /api/dashboard/webhooks/:id/deliveries': { query: deliveriesQuery },
  'POST /api/dashboard/partners/:id/invitations': { body: body({}, { email: nullable({ ...portalEmail, description: 'Defaults to the partner\'s address; becomes it.' }) }) },
  'POST /api/portal/sign-in': { body: body({ email: portalEmail }) },
  'POST /api/portal/sign-in/verify': { body: body({ token: { type: 'string', minLength: INPUT_RULES.portalTokenMinLength, maxLength: INPUT_RULES.portalTokenMaxLength, description: 'The `token` of the mailed link.' } }) },
  'POST /api/portal/invitations/accept': { body: body({ token: { type: 'string', minLength: INPUT_RULES.portalTokenMinLength, maxLength: INPUT_RULES.portalTokenMaxLength, description: 'The `token` of the mailed invitation.' } }) },
  'PUT /api/portal/partners/:id/payout-details': { body: payoutDetails },
  // Applications and link requests (docs/partners.md).
  'PUT /api/dashboard/programs/:id/portal-settings': { body: body({ applications_open: { type: 'boolean' }, link_requests_open: { type: 'boolean' } }) },
  'GET /api/dashboard/programs/:id/applications': { query: { status: decisionFilter } },
  'POST /api/dashboard/applications/:id/decline': { body: decline },
  'GET /api/dashboard/programs/:id/link-requests': { query: { status: decisionFilter } },
  'POST /api/dashboard/link-requests/:id/approve': { body: body({}, { short_link: nullable({ type: 'string', pattern: `(${trimmed(IDENTIFIER_PATTERN)})|^$`, description: 'Overrides the one asked for; empty or absent: the one asked for, else one made from the partner\'s code.' }) }) },
  'POST /api/dashboard/link-requests/:id/decline': { body: body({}, { reason: decline.properties.reason }) },
  'POST /api/apply/:slug': {
    body: body(
      { name: text(APPLICATION_LIMITS.nameMax), email: portalEmail, promotion: text(APPLICATION_LIMITS.promotionMax, { description: 'How the applicant will promote the program.' }) },
      { website: nullable({ type: 'string', maxLength: APPLICATION_LIMITS.websiteMax, pattern: `^$|${webhookUrl.pattern as string}` }) },
    ),
  },
  'POST /api/portal/partners/:id/link-requests': {
    body: body(
      { program_id: { ...id, description: 'A program the partner record is enrolled in, open to link requests.' } },
      { short_link: nullable({ type: 'string', pattern: `(${trimmed(IDENTIFIER_PATTERN)})|^$` }), note: nullable({ type: 'string', maxLength: APPLICATION_LIMITS.noteMax }) },
    ),
  },
};
