/**
 * The OpenAPI 3.1 document of the server's HTTP API, built from the contract: the spec's routes
 * (ROUTES), the dashboard's and the agent API's own routes (API_OPERATIONS below), the error
 * catalogue's envelopes and statuses, and hand-written JSON Schemas (draft 2020-12) of the answer
 * types next to them. The server serves it at GET /openapi.json; apps/server/test/openapi.test.ts
 * sends real requests to every operation and validates each answer against it, and fails when the
 * server registers a route the document lacks.
 */
import { BRAND } from './brand.js';
import { ERROR_CODES, STATUS_NAMES } from './errors.js';
import { NO_COMMISSION_REASONS } from './commissions.js';
import { DOMAIN_EVENT_TYPES } from './events.js';
import { COMMISSION_STATUSES, ROLES } from './limits.js';
import { OPERATION_REQUESTS } from './openapi-requests.js';
import { ROUTES, type Credential, type RouteSpec } from './routes.js';
import { SIGN_IN_PATHS } from './sign-in.js';
import { STATS_DIMENSIONS, STATS_GROUP_BY, STATS_INTERVALS } from './stats.js';

type Schema = Record<string, unknown>;
type Method = RouteSpec['method'];

/* ------------------------------------------------------------------ schema helpers */

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const arr = (items: Schema): Schema => ({ type: 'array', items });
const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
/** An object whose listed keys are all required; extra keys are allowed (answers only grow: additive fields). */
const obj = (properties: Record<string, Schema>, optional: string[] = []): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
});
/** `{success: true, data}`: the envelope of every success answer of the API routes. */
const ok = (data: Schema): Schema => obj({ success: { const: true }, data });

/* ------------------------------------------------------------------ component schemas */

const SCHEMAS: Record<string, Schema> = {
  PlatformError: {
    description: 'Platform error envelope (spec 7.1).',
    ...obj({
      data: { type: 'null' },
      error: obj({ status: int, name: { type: 'string', enum: Object.values(STATUS_NAMES) }, message: str, details: { type: 'object' }, code: enumOf(...Object.values(ERROR_CODES)) }, ['code']),
    }),
  },
  TypedError: {
    description: 'Typed error envelope (spec 7.1): no `data` key.',
    type: 'object',
    properties: { success: { const: false }, message: str, error: obj({ code: enumOf(...Object.values(ERROR_CODES)), message: str }) },
    required: ['error'],
    not: { required: ['data'] },
  },
  Program: obj({
    id: int,
    name: str,
    domain: str,
    commission_type: enumOf('percent', 'fixed', 'recurring_percent', 'recurring_fixed'),
    commission_rate: num,
    attribution_window_days: int,
    lead_auth: enumOf('server_required', 'browser_allowed'),
    api_token_masked: nullable(str),
  }),
  ProgramView: {
    allOf: [
      ref('Program'),
      obj({
        advertiser_id: nullable(int),
        api_key_revealed_at: nullable(str),
        key_rotation: nullable(obj({ marked_at: str, rotate_by: str })),
        commission_hold_days: int,
        payout_minimum: num,
        created_at: str,
        updated_at: str,
      }),
    ],
  },
  ReadinessData: obj({
    program_id: int,
    ready: bool,
    key_status: enumOf('active', 'marked'),
    rotate_by: nullable(str),
    checklist: arr(obj({ key: str, label: str, done: bool, next_step: nullable(str) })),
  }),
  WebhookEndpoint: obj({
    id: int,
    workspace_id: int,
    url: str,
    description: nullable(str),
    event_types: arr(str),
    program_id: nullable(int),
    partner_id: nullable(int),
    enabled: bool,
    disabled_reason: nullable(enumOf('failing')),
    disabled_at: nullable(str),
    failing_since: nullable(str),
    previous_secret_expires_at: nullable(str),
    created_at: str,
    updated_at: str,
  }),
  WebhookEndpointWithSecret: { allOf: [ref('WebhookEndpoint'), obj({ secret: { type: 'string', pattern: '^whsec_' } })] },
  WebhookDelivery: obj({
    id: int,
    endpoint_id: int,
    message_id: str,
    event_type: str,
    status: enumOf('pending', 'succeeded', 'failed'),
    attempts: int,
    next_attempt_at: nullable(str),
    created_at: str,
    delivered_at: nullable(str),
    last_attempt: nullable(ref('WebhookAttempt')),
  }),
  PartnerRef: obj({ id: int, code: str, name: str }),
  DashboardPartner: obj({
    id: int,
    name: str,
    email: nullable(str),
    code: str,
    clicks: int,
    leads: int,
    sales: int,
    revenue_cents: int,
    earnings: arr(obj({ currency: str, sales: int, revenue_cents: int, commissions_cents: int })),
    last_clicked: nullable(str),
  }),
  DashboardLink: obj({ id: int, short_link: str, partner_id: nullable(int), program_id: nullable(int), clicks: int, last_clicked: nullable(str), active: bool, partner_code: nullable(str), url: nullable(str) }),
  PaymentsConnection: obj({ provider: { const: 'stripe' }, connected: bool, stripe_account_id: nullable(str), webhook_secret_set: bool, webhook_url: str, intake_url: nullable(str) }),
  CliToken: obj({ id: int, label: nullable(str), created_at: str, last_used_at: nullable(str), expires_at: str, revoked_at: nullable(str) }),
  AgentKey: obj({ id: int, workspace_id: int, name: nullable(str), scopes: arr(str), key_masked: nullable(str), created_at: str, last_used_at: nullable(str), revoked_at: nullable(str) }),
  LedgerCommission: obj({
    id: int,
    program_id: int,
    sale_id: int,
    transaction_id: str,
    customer_key: nullable(str),
    partner: ref('PartnerRef'),
    amount_cents: int,
    adjustments_cents: int,
    currency: str,
    status: enumOf('pending', 'approved', 'paid', 'reversed', 'declined'),
    status_reason: nullable(str),
    review_reasons: arr(enumOf('self_referral_email', 'self_referral_processor_email')),
    hold_until: nullable(str),
    payout_id: nullable(int),
    sale_amount_cents: int,
    refunded_amount_cents: int,
    created_at: str,
    updated_at: str,
  }),
  Ledger: obj({ success: { const: true }, data: arr(ref('LedgerCommission')), meta: obj({ next_cursor: nullable(str) }) }),
  CommissionReviewResult: obj({ id: int, result: enumOf('approved', 'declined', 'unchanged', 'not_found'), status: nullable(str), message: str }, ['message']),
  PartnerBalance: obj({ partner: ref('PartnerRef'), currency: str, pending_cents: int, approved_cents: int, paid_cents: int, clawed_back_cents: int, open_clawback_cents: int, payable_cents: int }),
  Payout: obj({
    id: int,
    program_id: int,
    partner: ref('PartnerRef'),
    batch_id: nullable(int),
    currency: str,
    amount_cents: int,
    commissions_cents: int,
    adjustments_cents: int,
    commission_count: int,
    method: enumOf('paypal', 'wise', 'manual'),
    reference: str,
    status: enumOf('created', 'sent', 'failed'),
    note: nullable(str),
    created_at: str,
    updated_at: str,
  }),
  PayoutDetails: obj({ partner_id: int, method: enumOf('paypal', 'wise'), summary: str, updated_at: str }),
  WebhookAttempt: obj({ attempt: int, started_at: str, duration_ms: nullable(int), status_code: nullable(int), response_body: nullable(str), error: nullable(str), succeeded: bool }),
  WebhookDeliveryDetail: {
    allOf: [ref('WebhookDelivery'), obj({ payload: obj({ id: str, type: str, version: int, timestamp: str, program_id: nullable(int), data: { type: 'object' } }), attempt_log: arr(ref('WebhookAttempt')) })],
  },
  EventActor: obj({ type: enumOf('account', 'agent_key', 'operator', 'system'), id: nullable(int), label: nullable(str), ip: nullable(str) }),
  AuditEntry: obj({ id: int, event_id: str, action: enumOf(...DOMAIN_EVENT_TYPES), program_id: nullable(int), actor: ref('EventActor'), summary: str, occurred_at: str }),
  StripeIntakeAnswer: ok({
    ...obj({ event_id: str, type: str, action: enumOf('recorded', 'already_recorded', 'reversed', 'linked', 'ignored', 'duplicate'), reason: str, program_id: int }, ['reason']),
    description: 'What the intake did with the event; some actions add members (the sale, the refund).',
  }),
  DashboardAccount: obj({ id: int, email: str, name: nullable(str) }),
  DashboardWorkspace: obj({ id: int, name: str, role: enumOf(...ROLES) }),
  PortalSignedIn: obj({ signed_in: { const: true }, expires_at: str }),
  PortalPartnerRecord: obj({ partner_id: int, partner_name: str, partner_code: str, workspace_name: str, programs: arr(obj({ program_id: int, program_name: str })) }),
  PortalOverview: obj({
    partner: obj({ id: int, name: str, code: str }),
    terms: arr(obj({ program_id: int, program_name: str, domain: nullable(str), commission_type: str, commission_rate: num, cookie_window_days: int, hold_days: int, payout_minimum: num })),
    links: arr(obj({ id: int, program_id: int, short_link: str, url: str, active: bool, clicks: int, leads: int, sales: int })),
    commissions: arr(obj({ status: enumOf(...COMMISSION_STATUSES), currency: str, count: int, amount_cents: int })),
    payouts: arr(obj({ id: int, program_id: int, reference: str, currency: str, amount_cents: int, method: str, status: str, created_at: str })),
  }),
  Pagination: obj({ page: int, pageSize: int, pageCount: int, total: int }),
  NormalizedEvent: obj({ id: int, event_type: enumOf('click', 'lead', 'conversion'), timestamp: str, click_id: nullable(str), createdAt: str, partner: nullable(obj({ id: int, code: str })) }),
};

/* ------------------------------------------------------------------ operations */

type Tag = 'Tracking' | 'CLI' | 'Dashboard' | 'Commissions and payouts' | 'Webhooks' | 'Agent API' | 'Partner portal' | 'Payment intake' | 'Operations' | 'Pages';

export interface ApiOperation {
  method: Method | 'OPTIONS';
  /** Koa-style path (`:id`); the document writes `{id}`. */
  path: string;
  credential: Credential;
  tag: Tag;
  summary: string;
  /** Success statuses and the schema of their body (JSON unless `contentType` says otherwise). */
  success: Record<number, Schema>;
  contentType?: string;
  /** Other media types of the success answer, chosen by the request (e.g. `format=csv`). */
  alsoContent?: Record<string, Schema>;
  /** Error statuses this route can answer; their bodies are the envelopes `typedStatuses` picks. */
  errors: number[];
  /** Error statuses answered in the typed envelope (the others: platform). Both: listed in `eitherStatuses`. */
  typedStatuses?: number[];
  eitherStatuses?: number[];
  /** The JSON body's and the query's schemas: from OPERATION_REQUESTS (openapi-requests.ts) unless given here. */
  requestBody?: Schema;
  query?: Record<string, Schema>;
  requiredQuery?: string[];
  /** Retired: answers 410 only. */
  deprecated?: boolean;
}

const ANY_OBJECT: Schema = { type: 'object' };
/** Statuses every JSON route can answer whatever it does: bad JSON, body too large, a Host not served, rate limit, failure, degraded. */
const COMMON = [400, 413, 421, 429, 500, 503];
/** Extra statuses by credential: who is refused how. */
const BY_CREDENTIAL: Record<Credential, number[]> = {
  none: [],
  program_key: [401],
  optional_program_key: [401],
  login_token: [401, 403],
  dashboard_session: [401, 403, 404],
  agent_key: [401, 403, 404],
  portal_session: [401, 403, 404],
};

const op = (
  method: ApiOperation['method'],
  path: string,
  credential: Credential,
  tag: Tag,
  summary: string,
  success: Record<number, Schema>,
  extra: Partial<ApiOperation> = {},
): ApiOperation => ({
  method,
  path,
  credential,
  tag,
  summary,
  success,
  requestBody: OPERATION_REQUESTS[`${method} ${path}`]?.body,
  query: OPERATION_REQUESTS[`${method} ${path}`]?.query,
  requiredQuery: OPERATION_REQUESTS[`${method} ${path}`]?.requiredQuery,
  ...extra,
  // A dashboard write (any method but GET) must be same-origin JSON: 415 otherwise, even for DELETE.
  errors: [...new Set([...COMMON, ...BY_CREDENTIAL[credential], ...(credential === 'dashboard_session' && method !== 'GET' ? [415] : []), ...(extra.errors ?? [])])].sort(),
});

const programKeyTyped = { eitherStatuses: [401] };
const eventPage: Schema = obj({ data: arr(ref('NormalizedEvent')), meta: obj({ pagination: ref('Pagination') }) });

/** The spec's routes (ROUTES), with the design's answers. */
const SPEC_OPERATIONS: ApiOperation[] = [
  op('POST', ROUTES.trackClick.path, 'none', 'Tracking', 'Record a click on a referral link (spec 4.1)', {
    200: { anyOf: [obj({ success: { const: true }, click_id: str, partner_code: str, cookie_window_days: int }), obj({ success: { const: true }, message: str, data: obj({ eventId: int, programId: int, test_mode: { const: true } }) })] },
  }, { errors: [401, 403, 410], typedStatuses: [410], eitherStatuses: [401] }),
  op('OPTIONS', ROUTES.trackClick.path, 'none', 'Tracking', 'CORS preflight of the click route', { 204: {} }),
  op('POST', ROUTES.trackLead.path, 'optional_program_key', 'Tracking', 'Record a lead (spec 4.2)', {
    200: obj({ success: { const: true }, provisional: { const: true }, data: obj({ click_id: nullable(str), customer_status: str, lead_id: int, test_mode: { const: true } }, ['test_mode']) }, ['provisional']),
  }, { ...programKeyTyped, errors: [403] }),
  op('OPTIONS', ROUTES.trackLead.path, 'none', 'Tracking', 'CORS preflight of the lead route', { 204: {} }),
  op('POST', ROUTES.trackSale.path, 'program_key', 'Tracking', 'Record a sale (spec 4.3)', {
    200: ok({
      anyOf: [
        obj({ attributed: { const: true }, sale_id: int, transaction_id: str, commission_id: nullable(int), commission_amount_cents: int, currency: str, commission_reason: nullable(enumOf(...NO_COMMISSION_REASONS)) }),
        obj({ attributed: { const: false }, reason: { const: 'attribution_window_expired' } }),
        obj({ test_mode: { const: true }, sale_id: int, transaction_id: str, commission_reason: { const: 'test_mode' } }),
      ],
    }),
  }, { ...programKeyTyped, errors: [403, 404, 409, 422] }),
  op('POST', ROUTES.trackRefund.path, 'program_key', 'Tracking', 'Record a refund (spec 4.4)', {
    200: ok(obj({ refund_id: int, sale_id: int, transaction_id: str, reason: str, commission_id: nullable(int), commission_status: nullable(str), adjustment_amount_cents: int })),
  }, { ...programKeyTyped, errors: [404, 409] }),
  op('GET', ROUTES.readiness.path, 'program_key', 'Tracking', 'Integration readiness checklist (spec 4.5)', { 200: ok(ref('ReadinessData')) }, { typedStatuses: [401, 429, 500] }),
  op('GET', ROUTES.trackingEvents.path, 'dashboard_session', 'Dashboard', 'List tracking events of a program (spec 4.6)', { 200: eventPage }),
  op('POST', ROUTES.cliAuthStart.path, 'none', 'CLI', 'Start a CLI sign-in (spec 4.7)', { 200: ok(obj({ state: str, login_url: str, expires_at: str, poll_interval_seconds: int, pairing_code: str }, ['pairing_code'])) }),
  op('POST', ROUTES.cliAuthCallback.path, 'none', 'CLI', 'Complete a CLI sign-in with an id_token (spec 4.7)', { 200: ok(obj({ status: { const: 'complete' }, account: obj({ email: str, name: nullable(str) }) })) }, { errors: [401, 403, 404, 503] }),
  op('GET', ROUTES.cliAuthPoll.path, 'none', 'CLI', 'Poll a CLI sign-in (spec 4.7)', {
    200: ok({ oneOf: [obj({ status: { const: 'pending' }, expires_at: str }), obj({ status: { const: 'complete' }, token: str, account: obj({ email: str, name: nullable(str) }) }), obj({ status: { const: 'expired' } })] }),
  }, { errors: [404] }),
  op('POST', ROUTES.cliAuthLogout.path, 'login_token', 'CLI', 'Revoke the login token sent', { 200: ok(obj({ revoked: { const: true }, revoked_at: str })) }),
  op('POST', ROUTES.cliInit.path, 'login_token', 'CLI', 'Create a program (spec 4.7)', { 201: ok(obj({ program: ref('Program'), api_key_instructions: str, next_steps: arr(str) })) }),
  op('GET', ROUTES.cliPrograms.path, 'login_token', 'CLI', 'List the account\'s programs (spec 4.7)', { 200: ok(arr(ref('Program'))) }),
  op('GET', ROUTES.cliStatus.path, 'program_key', 'CLI', 'Program, key state and readiness (spec 4.7)', { 200: ok(obj({ program: ref('Program'), key: obj({ state: enumOf('active', 'marked'), rotate_by: nullable(str) }), readiness: ref('ReadinessData') })) }, programKeyTyped),
  op('POST', ROUTES.cliTestEvent.path, 'program_key', 'CLI', 'Send a test event or a synthetic chain (spec 4.7)', {
    200: ok({
      anyOf: [
        obj({ event_type: enumOf('click', 'lead', 'sale'), event_id: int, test_mode: { const: true }, click_id: str, transaction_id: str }, ['click_id', 'transaction_id']),
        obj({ chain_id: str, passed: bool, steps: arr(obj({ step: enumOf('click', 'lead', 'sale'), ok: bool, status: int, duration_ms: num, detail: { type: 'object' } })), chains_remaining_this_hour: int }),
      ],
    }),
  }, programKeyTyped),
  op('POST', ROUTES.cliStripeConnect.path, 'none', 'CLI', 'Retired: connect Stripe in the dashboard instead', {}, { errors: [410], deprecated: true }),
  op('POST', ROUTES.cliProgramKey.path, 'login_token', 'CLI', 'Generate or replace a program key (owner only)', {
    201: ok(obj({ program_id: int, api_key: str, api_token_masked: nullable(str), replaced: bool, note: str })),
  }, { errors: [404, 409] }),
  op('GET', ROUTES.cliWebhooks.path, 'login_token', 'Webhooks', 'List webhook endpoints (CLI)', { 200: ok(arr(ref('WebhookEndpoint'))) }, { errors: [404] }),
  op('POST', ROUTES.cliWebhookCreate.path, 'login_token', 'Webhooks', 'Create a webhook endpoint (CLI)', { 201: ok(ref('WebhookEndpointWithSecret')) }, { errors: [404, 409] }),
  op('PATCH', ROUTES.cliWebhookUpdate.path, 'login_token', 'Webhooks', 'Update a webhook endpoint (CLI)', { 200: ok(ref('WebhookEndpoint')) }, { errors: [404] }),
  op('DELETE', ROUTES.cliWebhookDelete.path, 'login_token', 'Webhooks', 'Delete a webhook endpoint (CLI)', { 200: ok({ type: 'null' }) }, { errors: [404] }),
  op('POST', ROUTES.cliWebhookRotate.path, 'login_token', 'Webhooks', 'Rotate an endpoint\'s signing secret (CLI)', { 200: ok(ref('WebhookEndpointWithSecret')) }, { errors: [404] }),
  op('POST', ROUTES.cliWebhookTest.path, 'login_token', 'Webhooks', 'Send a test event to an endpoint (CLI)', { 202: ok(ref('WebhookDeliveryDetail')) }, { errors: [404] }),
  op('GET', ROUTES.cliWebhookDeliveries.path, 'login_token', 'Webhooks', 'An endpoint\'s delivery log (CLI)', { 200: obj({ success: { const: true }, data: arr(ref('WebhookDelivery')), meta: obj({ pagination: ref('Pagination') }) }) }, { errors: [404] }),
  op('POST', ROUTES.cliWebhookResend.path, 'login_token', 'Webhooks', 'Resend a delivery (CLI)', { 202: ok(ref('WebhookDeliveryDetail')) }, { errors: [404] }),
  op('GET', ROUTES.agentPrograms.path, 'agent_key', 'Agent API', 'List the workspace\'s programs (spec 4.8)', { 200: ok(arr(ref('Program'))) }),
  op('GET', ROUTES.agentProgram.path, 'agent_key', 'Agent API', 'Read a program (spec 4.8)', { 200: ok(ref('Program')) }),
  op('PATCH', ROUTES.agentProgramUpdate.path, 'agent_key', 'Agent API', 'Update a program (spec 4.8)', { 200: ok(ref('Program')) }),
  op('GET', ROUTES.agentWebhooks.path, 'agent_key', 'Webhooks', 'List webhook endpoints (agent)', { 200: ok(arr(ref('WebhookEndpoint'))) }),
  op('POST', ROUTES.agentWebhookCreate.path, 'agent_key', 'Webhooks', 'Create a webhook endpoint (agent)', { 201: ok(ref('WebhookEndpointWithSecret')) }, { errors: [409] }),
  op('GET', ROUTES.agentWebhook.path, 'agent_key', 'Webhooks', 'Read a webhook endpoint (agent)', { 200: ok(ref('WebhookEndpoint')) }),
  op('PATCH', ROUTES.agentWebhookUpdate.path, 'agent_key', 'Webhooks', 'Update a webhook endpoint (agent)', { 200: ok(ref('WebhookEndpoint')) }),
  op('DELETE', ROUTES.agentWebhookDelete.path, 'agent_key', 'Webhooks', 'Delete a webhook endpoint (agent)', { 200: ok({ type: 'null' }) }),
  op('POST', ROUTES.agentWebhookRotate.path, 'agent_key', 'Webhooks', 'Rotate an endpoint\'s signing secret (agent)', { 200: ok(ref('WebhookEndpointWithSecret')) }),
  op('POST', ROUTES.agentWebhookTest.path, 'agent_key', 'Webhooks', 'Send a test event (agent)', { 202: ok(ref('WebhookDeliveryDetail')) }),
  op('GET', ROUTES.agentWebhookDeliveries.path, 'agent_key', 'Webhooks', 'An endpoint\'s delivery log (agent)', { 200: obj({ success: { const: true }, data: arr(ref('WebhookDelivery')), meta: obj({ pagination: ref('Pagination') }) }) }),
  op('GET', ROUTES.agentWebhookDelivery.path, 'agent_key', 'Webhooks', 'A delivery with every attempt (agent)', { 200: ok(ref('WebhookDeliveryDetail')) }),
  op('POST', ROUTES.agentWebhookResend.path, 'agent_key', 'Webhooks', 'Resend a delivery (agent)', { 202: ok(ref('WebhookDeliveryDetail')) }),
  op('POST', ROUTES.stripeWebhook.path, 'none', 'Payment intake', 'Stripe events, shared intake address (spec 6.1)', { 200: ref('StripeIntakeAnswer') }, { errors: [404] }),
  op('POST', ROUTES.stripeWebhookEndpoint.path, 'none', 'Payment intake', 'Stripe events at a connection\'s own intake address (spec 6.1)', { 200: ref('StripeIntakeAnswer') }, { errors: [404] }),
  op('GET', ROUTES.healthz.path, 'none', 'Operations', 'Liveness', { 200: obj({ status: { const: 'ok' } }) }, { errors: [503] }),
  op('GET', ROUTES.errorDocs.path, 'none', 'Pages', 'The error reference page (HTML)', { 200: str }, { contentType: 'text/html' }),
];

const D = 'dashboard_session' as const;
const A = 'agent_key' as const;
const P = 'portal_session' as const;

/** The dashboard's, operations' and agent API's own routes (docs/dashboard-api.md, docs/commissions.md, docs/operator.md). */
const OTHER_OPERATIONS: ApiOperation[] = [
  op('GET', '/readyz', 'none', 'Operations', 'Readiness for load balancers (docs/operator.md)', {
    200: obj({ status: { const: 'ready' }, reasons: { type: 'array', maxItems: 0 }, degraded: arr(str) }),
    503: obj({ status: { const: 'not_ready' }, reasons: { type: 'array', items: str, minItems: 1 }, degraded: arr(str) }),
  }),
  op('GET', '/metrics', 'none', 'Operations', 'Prometheus metrics, behind METRICS_TOKEN (docs/operator.md)', { 200: str }, { contentType: 'text/plain', errors: [401, 404] }),
  op('GET', '/openapi.json', 'none', 'Operations', 'This document', { 200: obj({ openapi: { const: '3.1.0' }, info: ANY_OBJECT, paths: ANY_OBJECT, components: ANY_OBJECT }) }),
  op('GET', '/tracker.js', 'none', 'Tracking', 'The browser tracker (deferred snippet)', { 200: str }, { contentType: 'application/javascript' }),
  op('GET', '/tracker/v1.js', 'none', 'Tracking', 'The browser tracker (versioned, async snippet)', { 200: str }, { contentType: 'application/javascript' }),
  op('POST', '/api/dashboard/session', 'none', 'Dashboard', 'Sign in with an id_token: sets the session cookie', { 200: ok(obj({ account: ref('DashboardAccount'), workspaces: arr(ref('DashboardWorkspace')), expires_at: str })) }, { errors: [401, 403, 415, 503] }),
  op('GET', '/api/dashboard/session', D, 'Dashboard', 'The signed-in account and its workspaces', { 200: ok(obj({ account: ref('DashboardAccount'), workspaces: arr(ref('DashboardWorkspace')) })) }),
  op('DELETE', '/api/dashboard/session', D, 'Dashboard', 'Sign out', { 200: ok(obj({ signed_out: { const: true } })) }),
  op('GET', SIGN_IN_PATHS.options, 'none', 'Dashboard', 'How the dashboard signs in', { 200: ok(obj({ mode: enumOf('oidc', 'development'), provider_name: nullable(str), start_url: str })) }),
  op('GET', '/api/dashboard/programs', D, 'Dashboard', 'List programs', { 200: ok(arr(ref('ProgramView'))) }),
  op('POST', '/api/dashboard/programs', D, 'Dashboard', 'Create a program', { 201: ok(ref('ProgramView')) }, { errors: [415] }),
  op('GET', '/api/dashboard/programs/:id', D, 'Dashboard', 'Read a program', { 200: ok(ref('ProgramView')) }),
  op('PATCH', '/api/dashboard/programs/:id', D, 'Dashboard', 'Update a program', { 200: ok(ref('ProgramView')) }, { errors: [415] }),
  op('POST', '/api/dashboard/programs/:id/key', D, 'Dashboard', 'Generate or regenerate the program key (owner only)', { 200: ok(obj({ program_id: int, api_key: str, api_token_masked: nullable(str), note: str })) }, { errors: [415] }),
  op('GET', '/api/dashboard/programs/:id/readiness', D, 'Dashboard', 'Readiness checklist', { 200: ok(ref('ReadinessData')) }),
  op('GET', '/api/dashboard/programs/:id/partners', D, 'Dashboard', 'Partners enrolled in a program', { 200: ok(arr(ref('DashboardPartner'))) }),
  op('POST', '/api/dashboard/programs/:id/partners', D, 'Dashboard', 'Add a partner (enrols it in the program)', { 201: ok(obj({ id: int, name: str, email: nullable(str), code: str, program_id: int })) }, { errors: [409, 415] }),
  op('GET', '/api/dashboard/programs/:id/links', D, 'Dashboard', 'Referral links of a program', { 200: ok(arr(ref('DashboardLink'))) }),
  op('POST', '/api/dashboard/programs/:id/links', D, 'Dashboard', 'Create a referral link', { 201: ok(ref('DashboardLink')) }, { errors: [409, 415] }),
  op('PATCH', '/api/dashboard/links/:id', D, 'Dashboard', 'Switch a link on or off', { 200: ok(ref('DashboardLink')) }, { errors: [415] }),
  op('GET', '/api/dashboard/programs/:id/payments', D, 'Dashboard', 'The payment-processor connection', { 200: ok(ref('PaymentsConnection')) }),
  op('PUT', '/api/dashboard/programs/:id/payments', D, 'Dashboard', 'Connect Stripe', { 200: ok(ref('PaymentsConnection')) }, { errors: [409, 415] }),
  op('DELETE', '/api/dashboard/programs/:id/payments', D, 'Dashboard', 'Disconnect Stripe', { 200: ok(ref('PaymentsConnection')) }),
  op('GET', '/api/dashboard/programs/:id/commissions', D, 'Commissions and payouts', 'The commission ledger', { 200: ref('Ledger') }, { alsoContent: { 'text/csv': str } }),
  op('POST', '/api/dashboard/programs/:id/commissions/approve', D, 'Commissions and payouts', 'Approve commissions', { 200: ok(arr(ref('CommissionReviewResult'))) }, { errors: [415] }),
  op('POST', '/api/dashboard/programs/:id/commissions/decline', D, 'Commissions and payouts', 'Decline commissions', { 200: ok(arr(ref('CommissionReviewResult'))) }, { errors: [415] }),
  op('GET', '/api/dashboard/programs/:id/balances', D, 'Commissions and payouts', 'Partner balances by currency', { 200: ok(arr(ref('PartnerBalance'))) }),
  op('GET', '/api/dashboard/programs/:id/payouts', D, 'Commissions and payouts', 'Payouts', { 200: ok(arr(ref('Payout'))) }),
  op('POST', '/api/dashboard/programs/:id/payouts', D, 'Commissions and payouts', 'Create a payout', { 201: ok(ref('Payout')) }, { errors: [409, 415] }),
  op('POST', '/api/dashboard/programs/:id/payout-batches', D, 'Commissions and payouts', 'Create a payout batch', { 201: ok(obj({ batch_id: int, payouts: arr(ref('Payout')), skipped: arr(obj({ partner: ref('PartnerRef'), currency: str, payable_cents: int, reason: enumOf('below_minimum', 'nothing_payable') })) })) }, { errors: [409, 415] }),
  op('PATCH', '/api/dashboard/payouts/:id', D, 'Commissions and payouts', 'Mark a payout sent or failed', { 200: ok(ref('Payout')) }, { errors: [409, 415] }),
  op('GET', '/api/dashboard/payout-batches/:id/export', D, 'Commissions and payouts', 'A payout file (CSV) of a batch', { 200: str }, { contentType: 'text/csv', errors: [409] }),
  op('GET', '/api/dashboard/partners/:id/payout-details', D, 'Commissions and payouts', 'A partner\'s payout details', { 200: ok(nullable(ref('PayoutDetails'))) }),
  op('PUT', '/api/dashboard/partners/:id/payout-details', D, 'Commissions and payouts', 'Set a partner\'s payout details', { 200: ok(ref('PayoutDetails')) }, { errors: [415] }),
  op('GET', '/api/dashboard/cli-tokens', D, 'Dashboard', 'The account\'s CLI tokens', { 200: ok(arr(ref('CliToken'))) }),
  op('POST', '/api/dashboard/cli-tokens/:id/revoke', D, 'Dashboard', 'Revoke a CLI token', { 200: ok(ref('CliToken')) }, { errors: [415] }),
  op('GET', '/api/dashboard/workspaces/:id/agent-keys', D, 'Dashboard', 'A workspace\'s agent keys', { 200: ok(arr(ref('AgentKey'))) }),
  op('GET', '/api/dashboard/workspaces/:id/audit-log', D, 'Dashboard', 'A workspace\'s audit log', { 200: obj({ success: { const: true }, data: arr(ref('AuditEntry')), meta: obj({ pagination: ref('Pagination') }) }) }),
  op('POST', '/api/dashboard/agent-keys/:id/revoke', D, 'Dashboard', 'Revoke an agent key', { 200: ok(ref('AgentKey')) }, { errors: [415] }),
  op('GET', '/api/dashboard/workspaces/:id/webhooks', D, 'Webhooks', 'List webhook endpoints', { 200: ok(arr(ref('WebhookEndpoint'))) }),
  op('POST', '/api/dashboard/workspaces/:id/webhooks', D, 'Webhooks', 'Create a webhook endpoint', { 201: ok(ref('WebhookEndpointWithSecret')) }, { errors: [409, 415] }),
  op('GET', '/api/dashboard/webhooks/:id', D, 'Webhooks', 'Read a webhook endpoint', { 200: ok(ref('WebhookEndpoint')) }),
  op('PATCH', '/api/dashboard/webhooks/:id', D, 'Webhooks', 'Update a webhook endpoint', { 200: ok(ref('WebhookEndpoint')) }, { errors: [415] }),
  op('DELETE', '/api/dashboard/webhooks/:id', D, 'Webhooks', 'Delete a webhook endpoint', { 200: ok({ type: 'null' }) }),
  op('POST', '/api/dashboard/webhooks/:id/rotate-secret', D, 'Webhooks', 'Rotate an endpoint\'s signing secret', { 200: ok(ref('WebhookEndpointWithSecret')) }, { errors: [415] }),
  op('POST', '/api/dashboard/webhooks/:id/test', D, 'Webhooks', 'Send a test event', { 202: ok(ref('WebhookDeliveryDetail')) }, { errors: [415] }),
  op('GET', '/api/dashboard/webhooks/:id/deliveries', D, 'Webhooks', 'An endpoint\'s delivery log', { 200: obj({ success: { const: true }, data: arr(ref('WebhookDelivery')), meta: obj({ pagination: ref('Pagination') }) }) }),
  op('GET', '/api/dashboard/webhook-deliveries/:id', D, 'Webhooks', 'A delivery with every attempt', { 200: ok(ref('WebhookDeliveryDetail')) }),
  op('POST', '/api/dashboard/webhook-deliveries/:id/resend', D, 'Webhooks', 'Resend a delivery', { 202: ok(ref('WebhookDeliveryDetail')) }, { errors: [415] }),
  // The partner portal (docs/partners.md).
  op('POST', '/api/dashboard/partners/:id/invitations', D, 'Partner portal', 'Invite a partner to the portal by e-mail', { 201: ok(obj({ invitation_id: int, partner_id: int, email: str, expires_at: str })) }, { errors: [409, 415] }),
  op('POST', '/api/portal/sign-in', 'none', 'Partner portal', 'Ask for a one-time sign-in link (the same answer for every address)', { 202: ok(obj({ sent: { const: true }, message: str })) }, { errors: [403, 415] }),
  op('POST', '/api/portal/sign-in/verify', 'none', 'Partner portal', 'Sign in with a one-time link: sets the portal session cookie', { 200: ok(ref('PortalSignedIn')) }, { errors: [401, 403, 415] }),
  op('POST', '/api/portal/invitations/accept', 'none', 'Partner portal', 'Accept an invitation: binds the address and sets the portal session cookie', { 200: ok(ref('PortalSignedIn')) }, { errors: [401, 403, 404, 409, 410, 415] }),
  op('GET', '/api/portal/session', P, 'Partner portal', 'The signed-in partner person and their partner records', { 200: ok(obj({ email: str, partners: arr(ref('PortalPartnerRecord')) })) }),
  op('DELETE', '/api/portal/session', P, 'Partner portal', 'Sign out of the portal', { 200: ok(obj({ signed_out: { const: true } })) }, { errors: [415] }),
  op('GET', '/api/portal/partners/:id', P, 'Partner portal', "One partner record's terms, links, commissions by status and currency, payouts", {
    200: ok(ref('PortalOverview')),
  }),
  op('GET', '/api/portal/partners/:id/payout-details', P, 'Partner portal', 'Where the partner is paid (a summary)', { 200: ok(nullable(ref('PayoutDetails'))) }),
  op('PUT', '/api/portal/partners/:id/payout-details', P, 'Partner portal', 'Set where the partner is paid (encrypted at rest)', { 200: ok(ref('PayoutDetails')) }, { errors: [415] }),
  op('GET', '/api/agent/v1/programs/:id/commissions', A, 'Commissions and payouts', 'The commission ledger (agent, commissions:read)', { 200: ref('Ledger') }),
  op('GET', '/api/agent/v1/programs/:id/balances', A, 'Commissions and payouts', 'Partner balances (agent, commissions:read)', { 200: ok(arr(ref('PartnerBalance'))) }),
  op('GET', '/api/agent/v1/programs/:id/payouts', A, 'Commissions and payouts', 'Payouts (agent, commissions:read)', { 200: ok(arr(ref('Payout'))) }),
];

/* ------------------------------------------------------------------ applications, link requests, the portal's per-link chart */

// docs/partners.md, "Applications" and "Link requests". Kept in one block: the schemas are inline.
const decisionStatus = enumOf('pending', 'approved', 'declined');
const portalSettings = obj({ program_id: int, applications_open: bool, link_requests_open: bool, apply_url: nullable(str) });
const application = obj({
  id: int, program_id: int, name: str, email: str, website: nullable(str), promotion: str, status: decisionStatus, decline_reason: nullable(str),
  partner_id: nullable(int), existing_partner_id: nullable(int), created_at: str, decided_at: nullable(str),
});
const linkRequest = obj({
  id: int, partner_id: int, partner_code: str, partner_name: str, program_id: int, program_name: str, short_link: nullable(str), note: nullable(str),
  status: decisionStatus, decline_reason: nullable(str), link_id: nullable(int), created_at: str, decided_at: nullable(str),
});

const PARTNER_PROGRAM_OPERATIONS: ApiOperation[] = [
  op('GET', '/api/dashboard/programs/:id/portal-settings', D, 'Partner portal', 'Whether the program takes applications and link requests, and its application page', { 200: ok(portalSettings) }),
  op('PUT', '/api/dashboard/programs/:id/portal-settings', D, 'Partner portal', 'Open or close the program for applications and link requests', { 200: ok(portalSettings) }, { errors: [415] }),
  op('GET', '/api/dashboard/programs/:id/applications', D, 'Partner portal', 'Applications to the program, newest first', { 200: ok(arr(application)) }),
  op('POST', '/api/dashboard/applications/:id/approve', D, 'Partner portal', 'Approve: partner, enrollment, default link, invitation and its e-mail, in one transaction', {
    200: ok(obj({ application, partner_id: int, link: ref('DashboardLink'), invitation_id: int })),
  }, { errors: [409, 415] }),
  op('POST', '/api/dashboard/applications/:id/decline', D, 'Partner portal', 'Decline, with an optional reason and e-mail to the applicant', { 200: ok(obj({ application })) }, { errors: [409, 415] }),
  op('GET', '/api/dashboard/programs/:id/link-requests', D, 'Partner portal', "Partners' link requests in the program, newest first", { 200: ok(arr(linkRequest)) }),
  op('POST', '/api/dashboard/link-requests/:id/approve', D, 'Partner portal', 'Approve a link request: creates the link', { 200: ok(obj({ request: linkRequest, link: ref('DashboardLink') })) }, { errors: [409, 415] }),
  op('POST', '/api/dashboard/link-requests/:id/decline', D, 'Partner portal', 'Decline a link request, with an optional reason', { 200: ok(obj({ request: linkRequest })) }, { errors: [409, 415] }),
  op('GET', '/api/apply/:slug', 'none', 'Partner portal', "The public application page's program terms (404 when closed)", {
    200: ok(obj({ program_name: str, domain: nullable(str), commission_type: str, commission_rate: num, cookie_window_days: int, hold_days: int, payout_minimum: num })),
  }, { errors: [404] }),
  op('POST', '/api/apply/:slug', 'none', 'Partner portal', 'Apply to the program (the same answer whether or not the address applied before or is a partner)', {
    202: ok(obj({ received: { const: true }, message: str })),
  }, { errors: [403, 404, 415] }),
  op('GET', '/api/portal/partners/:id/link-requests', P, 'Partner portal', "The partner record's link requests", { 200: ok(arr(linkRequest)) }),
  op('POST', '/api/portal/partners/:id/link-requests', P, 'Partner portal', 'Ask for another referral link (where the program allows it)', { 201: ok(linkRequest) }, { errors: [409, 415] }),
  op('GET', '/api/portal/partners/:id/links/:linkId/daily', P, 'Partner portal', "One link's clicks, leads and sales per UTC day, last 30 days", {
    200: ok(obj({ link_id: int, days: arr(str), clicks: arr(int), leads: arr(int), sales: arr(int) })),
  }),
];


/* ------------------------------------------------------------------ the stats API */

// The stats API (docs/analytics.md), one block of its own.
const statsAmounts = arr(obj({ currency: str, amount_cents: int }));
const statsMetrics = { clicks: int, unique_clicks: int, bot_clicks: int, leads: int, sales: int, revenue: statsAmounts, refunds: int, refunded: statsAmounts };
const statsReport: Schema = ok(
  obj({
    program_id: int,
    from: str,
    to: str,
    interval: enumOf(...STATS_INTERVALS),
    time_zone: str,
    filters: obj({ partner_id: nullable(int), link_id: nullable(int), dimension: nullable(obj({ name: enumOf(...STATS_DIMENSIONS), value: str })) }),
    totals: obj(statsMetrics),
    conversion: obj({ click_to_lead: nullable(num), lead_to_sale: nullable(num), click_to_sale: nullable(num) }),
    series: arr(obj({ start: str, ...statsMetrics })),
    breakdown: nullable(obj({ group_by: enumOf(...STATS_GROUP_BY), rows: arr(obj({ key: str, label: str, ...statsMetrics })) })),
  }),
);
const statsQuery: Record<string, Schema> = {
  from: str,
  to: str,
  interval: enumOf(...STATS_INTERVALS),
  tz: str,
  group_by: enumOf(...STATS_GROUP_BY),
  partner_id: int,
  link_id: int,
  ...Object.fromEntries(STATS_DIMENSIONS.map((d) => [d, str])),
};
const STATS_OPERATIONS: ApiOperation[] = [
  op('GET', '/api/dashboard/programs/:id/stats', D, 'Dashboard', 'Stats from the rollups: totals, a series in a time zone, a breakdown (docs/analytics.md)', { 200: statsReport }, { query: statsQuery }),
  op('GET', '/api/agent/v1/programs/:id/stats', A, 'Agent API', 'Stats from the rollups (agent, programs:read)', { 200: statsReport }, { query: statsQuery }),
  op('GET', '/api/portal/partners/:id/stats', P, 'Partner portal', "The partner's own stats in one of their programs", { 200: statsReport }, {
    query: { program_id: int, from: str, to: str, interval: enumOf(...STATS_INTERVALS), tz: str, group_by: enumOf('link'), link_id: int },
  }),
];

export const API_OPERATIONS: readonly ApiOperation[] = [...SPEC_OPERATIONS, ...OTHER_OPERATIONS, ...PARTNER_PROGRAM_OPERATIONS, ...STATS_OPERATIONS];

/**
 * Routes the server registers that are browser pages or development-only legs of sign-in, not an
 * API: listed so the coverage test can tell them from a forgotten route.
 */
export const UNDOCUMENTED_ROUTES: ReadonlyArray<{ method: string; path: string; reason: string }> = [
  { method: 'GET', path: SIGN_IN_PATHS.cliLogin, reason: 'HTML page of the CLI sign-in (browser leg)' },
  { method: 'GET', path: `${SIGN_IN_PATHS.cliLogin}/continue`, reason: 'HTML page of the CLI sign-in (browser leg)' },
  { method: 'GET', path: SIGN_IN_PATHS.start, reason: 'redirect to the identity provider (browser leg)' },
  { method: 'GET', path: SIGN_IN_PATHS.callback, reason: 'redirect back from the identity provider (browser leg)' },
  { method: 'GET', path: SIGN_IN_PATHS.signedOut, reason: 'HTML page after signing out' },
  { method: 'GET', path: '/dev-idp/sign-in', reason: 'development identity provider: HTML page, not for integrators' },
  { method: 'POST', path: '/dev-idp/token', reason: 'development identity provider: not for integrators' },
  { method: 'GET', path: '/docs/api', reason: 'HTML page: the reference rendering this document' },
  { method: 'GET', path: '/docs/api/:file', reason: 'static files of the reference page' },
  { method: 'GET', path: '/demo/shop', reason: 'demo shop page (HTML): only under `start --demo` on an unexposed server' },
  { method: 'POST', path: '/demo/shop/signup', reason: 'demo shop button: only under `start --demo` on an unexposed server' },
  { method: 'POST', path: '/demo/shop/buy', reason: 'demo shop button: only under `start --demo` on an unexposed server' },
  { method: 'GET', path: '/dev/mailbox', reason: 'development mailbox: HTML page, only on a development server without SMTP' },
  { method: 'GET', path: '(web app)', reason: 'the dashboard web app: every remaining GET (HTML and its assets)' },
];

/* ------------------------------------------------------------------ the document */

const SECURITY: Record<Credential, Array<Record<string, string[]>>> = {
  none: [],
  program_key: [{ programKey: [] }],
  optional_program_key: [{ programKey: [] }, {}],
  login_token: [{ loginToken: [] }],
  dashboard_session: [{ session: [] }],
  agent_key: [{ agentKey: [] }],
  portal_session: [{ portalSession: [] }],
};

/** `/a/:id/b` → `/a/{id}/b`. */
export const openApiPath = (path: string): string => path.replace(/:(\w+)/g, '{$1}');

function errorSchema(o: ApiOperation, status: number): Schema {
  if (o.eitherStatuses?.includes(status) || status === 429) return status === 429 ? ref('TypedError') : { anyOf: [ref('PlatformError'), ref('TypedError')] };
  return o.typedStatuses?.includes(status) ? ref('TypedError') : ref('PlatformError');
}

function operationObject(o: ApiOperation): Schema {
  const params = [...o.path.matchAll(/:(\w+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: m[1] === 'endpointId' ? str : { type: 'integer', minimum: 1 } }));
  const query = Object.entries(o.query ?? {}).map(([name, schema]) => ({ name, in: 'query', required: o.requiredQuery?.includes(name) ?? false, schema }));
  const responses: Record<string, Schema> = {};
  for (const [status, schema] of Object.entries(o.success)) {
    const type = o.contentType ?? 'application/json';
    const also = Object.fromEntries(Object.entries(o.alsoContent ?? {}).map(([media, s]) => [media, { schema: s }]));
    responses[status] = Number(status) === 204 ? { description: 'No content' } : { description: 'Success', content: { [type]: { schema }, ...also } };
  }
  for (const status of o.errors) {
    if (responses[status]) continue;
    responses[status] = { description: STATUS_NAMES[status] ?? 'Error', content: { 'application/json': { schema: errorSchema(o, status) } } };
  }
  return {
    operationId: `${o.method.toLowerCase()}${o.path.replace(/[^A-Za-z0-9]+(\w)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    tags: [o.tag],
    summary: o.summary,
    ...(o.deprecated ? { deprecated: true } : {}),
    security: SECURITY[o.credential],
    ...(params.length + query.length > 0 ? { parameters: [...params, ...query] } : {}),
    ...(o.requestBody ? { requestBody: { required: true, content: { 'application/json': { schema: o.requestBody } } } } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document; `serverUrl` is the server's public address. */
export function buildOpenApiDocument(serverUrl: string, version = '0.1.0'): Record<string, unknown> {
  const paths: Record<string, Record<string, Schema>> = {};
  for (const o of API_OPERATIONS) {
    const p = openApiPath(o.path);
    (paths[p] ??= {})[o.method.toLowerCase()] = operationObject(o);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: `${BRAND.name} API`,
      version,
      description: 'Generated from @reftrack/contract. Errors come in the platform envelope `{data:null,error:{status,name,message,details,code?}}` or the typed envelope `{error:{code,message}}`; every code is described at /docs/errors.',
    },
    servers: [{ url: serverUrl }],
    tags: ['Tracking', 'CLI', 'Dashboard', 'Commissions and payouts', 'Webhooks', 'Agent API', 'Partner portal', 'Payment intake', 'Operations', 'Pages'].map((name) => ({ name })),
    paths,
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        programKey: { type: 'http', scheme: 'bearer', description: 'Program key (aff_…): tracking API, `reftrack status` and `test-event`.' },
        loginToken: { type: 'http', scheme: 'bearer', description: 'CLI login token from `reftrack login`.' },
        agentKey: { type: 'http', scheme: 'bearer', description: 'Agent key (agt_…) with scopes.' },
        session: { type: 'apiKey', in: 'cookie', name: 'reftrack_session', description: 'Dashboard session cookie; writes must be same-origin JSON.' },
        portalSession: { type: 'apiKey', in: 'cookie', name: 'reftrack_portal', description: 'Partner portal session cookie (docs/partners.md); writes must be same-origin JSON.' },
      },
    },
  };
}
