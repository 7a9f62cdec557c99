/**
 * The OpenAPI document (GET /openapi.json, built from @reftrack/contract): every documented
 * operation is called on the real server — without its credential, then with it and real ids — and
 * each answer's status must be one the document lists and its body must validate (Ajv, JSON Schema
 * draft 2020-12) against the schema the document gives for that status. A route the server
 * registers that the document lacks fails the coverage test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import Stripe from 'stripe';
import { AGENT_SCOPES, API_OPERATIONS, openApiPath, PORTAL_SESSION_COOKIE, UNDOCUMENTED_ROUTES } from '@reftrack/contract';
import { createApp, registeredRoutes } from '../src/app.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { signDevToken } from '../src/auth/id-token.js';
import { sha256Hex } from '../src/auth/secret-hash.js';
import { createPortalSession } from '../src/auth/portal-session.js';
import { insertId } from '../src/db/insert-id.js';
import { accountsFixture, cliLoginAs, signInAs } from './helpers/accounts.js';
import { click, sale } from './helpers/flows.js';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is read as plain JSON */
type Doc = any;

let s: TestServer;
let doc: Doc;
let cookie: Record<string, string>;
let loginToken: string;
let agentKey: string;
let portalCookie: Record<string, string>;
let portalPerson: number;
let receiver: Receiver;
const ids: Record<string, string> = {};

const ajv = new Ajv2020({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();
/** A response schema compiled with the document's components, so its `#/components/...` refs resolve. */
function validatorFor(key: string, schema: unknown): ValidateFunction {
  let v = validators.get(key);
  if (!v) {
    v = ajv.compile({ ...(schema as object), components: doc.components });
    validators.set(key, v);
  }
  return v;
}

interface Call {
  method: string;
  path: string;
  status: number;
  body: unknown;
  contentType: string;
}

/** Checks one answer against the document: a listed status, a listed content type, a valid body. */
function checkAnswer(call: Call): string[] {
  const operation = doc.paths[call.path]?.[call.method.toLowerCase()];
  if (!operation) return [`${call.method} ${call.path}: not in the document`];
  const response = operation.responses[String(call.status)];
  if (!response) return [`${call.method} ${call.path}: answered ${call.status}, the document lists ${Object.keys(operation.responses).join(', ')} (${JSON.stringify(call.body)?.slice(0, 200)})`];
  if (!response.content) return call.body === undefined ? [] : [`${call.method} ${call.path} ${call.status}: a body where the document says none`];
  const contents = Object.entries(response.content as Record<string, { schema: unknown }>);
  const [type, media] = contents.find(([t]) => call.contentType.startsWith(t)) ?? contents[0]!;
  if (!call.contentType.startsWith(type)) return [`${call.method} ${call.path} ${call.status}: content type ${call.contentType}, documented ${contents.map(([t]) => t).join(', ')}`];
  if (type !== 'application/json') return [];
  const validate = validatorFor(`${call.method} ${call.path} ${call.status}`, media.schema);
  return validate(call.body) ? [] : [`${call.method} ${call.path} ${call.status}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(call.body).slice(0, 300)}`];
}

function credentialHeaders(security: Array<Record<string, string[]>>): Record<string, string> {
  const scheme = Object.keys(security[0] ?? {})[0];
  if (scheme === 'programKey') return bearer(KEY1);
  if (scheme === 'loginToken') return bearer(loginToken);
  if (scheme === 'agentKey') return bearer(agentKey);
  if (scheme === 'session') return cookie;
  if (scheme === 'portalSession') return portalCookie;
  return {};
}

/** Real ids for path parameters, chosen by the path's resource. */
function concretePath(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string, offset: number) => {
    if (name === 'endpointId') return 'whe_unknown';
    if (name === 'programId') return '1';
    if (name === 'slug') return ids.applySlug ?? 'AAAAAAAAAAAAAAAA';
    const before = path.slice(0, offset);
    if (/webhook-deliveries\/$/.test(before)) return ids.delivery ?? '1';
    if (/webhooks\/$/.test(before)) return ids.webhook ?? '1';
    if (/links\/$/.test(before)) return '1';
    if (/payout-batches\/$/.test(before) || /payouts\/$/.test(before)) return '1';
    return '1';
  });
}

async function send(method: string, path: string, headers: Record<string, string>): Promise<Call> {
  // DELETE sends a JSON body too: a dashboard write must be JSON whatever its method (else 415).
  const withBody = !['GET', 'OPTIONS'].includes(method);
  const res = await s.raw(concretePath(path) + (path === '/api/v1/cli/auth/poll' ? '?state=unknown' : ''), {
    method,
    headers: { ...(withBody ? { 'content-type': 'application/json' } : {}), ...(method === 'OPTIONS' ? { origin: 'https://acme.test', 'access-control-request-method': 'POST' } : {}), ...headers },
    body: withBody ? '{}' : undefined,
  });
  return { method, path, status: res.status, body: res.text ? (res.body ?? res.text) : undefined, contentType: res.headers.get('content-type') ?? '' };
}

/**
 * Operations that delete a thing (1) or end a credential (2, the dashboard session 3) are called
 * last, in that order, so the others run with everything intact.
 */
const rank = (method: string, path: string): number =>
  path === '/api/dashboard/session' && method === 'DELETE' ? 3 : /\/(revoke|logout)$/.test(path) ? 2 : method === 'DELETE' ? 1 : 0;

function operations(): Array<{ method: string; path: string; operation: any }> {
  const all = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation })));
  return [0, 1, 2, 3].flatMap((r) => all.filter((o) => rank(o.method, o.path) === r));
}

beforeAll(async () => {
  // A local receiver, so the delivery log holds a real attempt whose answer the document types.
  s = await startTestServer({ fixture: accountsFixture(), env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  receiver = await startReceiver();
  const res = await s.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  cookie = await signInAs(s, 'owner@acme.test');
  loginToken = await cliLoginAs(s, 'owner@acme.test');
  agentKey = await createAgentKey(s.db, 1, [...AGENT_SCOPES], 'openapi');
  // A partner person with access to partner 1, signed in to the portal (docs/partners.md).
  const person = await insertId(s.db, 'portal_people', { email: 'pat.portal@p.test', created_at: Date.now() });
  portalPerson = person;
  await s.db('partner_portal_access').insert({ partner_id: 1, person_id: person, created_at: Date.now() });
  portalCookie = { cookie: `${PORTAL_SESSION_COOKIE}=${(await createPortalSession(s.db, person, Date.now())).token}` };
  // Program 1 open for applications, so its public page answers (docs/partners.md, "Applications").
  const opened = await s.raw('/api/dashboard/programs/1/portal-settings', { method: 'PUT', headers: { ...cookie, 'content-type': 'application/json' }, body: JSON.stringify({ applications_open: true, link_requests_open: true }) });
  expect(opened.status, opened.text).toBe(200);
  ids.applySlug = String(opened.body.data.apply_url).split('/').pop()!;
  const hook = await s.post('/api/dashboard/workspaces/1/webhooks', { url: receiver.url, event_types: ['sale.created'] }, cookie);
  expect(hook.status, hook.text).toBe(201);
  ids.webhook = String(hook.body.data.id);
  const test = await s.post(`/api/dashboard/webhooks/${ids.webhook}/test`, {}, cookie);
  expect(test.status, test.text).toBeLessThan(300);
  await s.running.deps.webhooks.runDue();
  await receiver.waitFor(1);
  const deliveries = await s.get(`/api/dashboard/webhooks/${ids.webhook}/deliveries`, cookie);
  ids.delivery = String(deliveries.body?.data?.[0]?.id ?? 1);
  const delivery = await s.get(`/api/dashboard/webhook-deliveries/${ids.delivery}`, cookie);
  expect(delivery.body.data.attempt_log.length, delivery.text).toBeGreaterThan(0);
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

/* ------------------------------------------------------------------ request bodies and queries */

/** The document's request schema of an operation (`METHOD /path/{id}`), compiled with the components. */
function requestValidator(key: string): ValidateFunction | undefined {
  const [method, path] = key.split(' ');
  const schema = doc.paths[path!]?.[method!.toLowerCase()]?.requestBody?.content?.['application/json']?.schema;
  return schema === undefined ? undefined : validatorFor(`request ${key}`, schema);
}

/** Writes that read no body: each says why, so a new write must either describe its body or be listed here. */
const NO_BODY: Record<string, string> = {
  'POST /api/v1/cli/auth/start': 'starts a sign-in; reads nothing',
  'POST /api/v1/cli/auth/logout': 'revokes the token sent',
  'POST /api/v1/cli/stripe-connect': 'retired: 410',
  'DELETE /api/dashboard/session': 'ends the session sent',
  'DELETE /api/portal/session': 'ends the session sent',
  'POST /api/dashboard/programs/{id}/key': 'generates a key; reads nothing',
  'DELETE /api/dashboard/programs/{id}/payments': 'disconnects; reads nothing',
  'POST /api/dashboard/cli-tokens/{id}/revoke': 'revokes the token named in the path',
  'POST /api/dashboard/agent-keys/{id}/revoke': 'revokes the key named in the path',
  'POST /api/dashboard/applications/{id}/approve': 'approves the application named in the path',
};
const readsNoBody = (key: string): boolean => key in NO_BODY || key.startsWith('OPTIONS ') || key.startsWith('DELETE ') || /\/(rotate-secret|test|resend)$/.test(key);

/** Created by the cases as they run, for the cases after them. */
const made: Record<string, any> = {};
const STRIPE_SECRET = 'whsec_docs';
const stripeSigned = (payload: string): Record<string, string> => ({ 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: STRIPE_SECRET }) });
const dashboard = () => cookie;

/** A new customer's first sale on program 1 (click → lead → sale) and its pending commission. */
async function pendingCommission(customer: string, transaction: string): Promise<any> {
  const lead = await s.post('/api/v1/track/lead', { click_id: await click(s), customer_key: customer }, bearer(KEY1));
  expect(lead.status, lead.text).toBe(200);
  expect((await sale(s, { transaction_id: transaction, customer_key: customer })).status).toBe(200);
  const ledger = await s.get('/api/dashboard/programs/1/commissions?status=pending', cookie);
  const commission = ledger.body.data.find((c: any) => c.transaction_id === transaction);
  expect(commission, JSON.stringify(ledger.body)).toBeDefined();
  return commission;
}

interface BodyCase {
  /** The operation: `METHOD /document/path`. */
  op: string;
  /** The address sent to; the operation's own path when it has no parameters. */
  path?: () => string;
  headers?: (payload: string) => Record<string, string>;
  /** A body the schema accepts; the server must succeed with a documented success status and body. */
  valid: () => unknown;
  /** What the success answer gives the next cases. */
  keep?: (body: any) => void;
  /** Bodies the schema rejects; the server must refuse each with `status` (400 unless said) in a documented envelope. */
  invalid: Array<{ body: unknown; status?: number }>;
  /** Send the rejected bodies first: the valid one changes a state the server checks before the body. */
  invalidFirst?: boolean;
}

/** In the order they run: each case may use what an earlier one made. */
const BODY_CASES: BodyCase[] = [
  {
    op: 'POST /api/v1/cli/auth/callback',
    valid: async () => ({ state: (await s.post('/api/v1/cli/auth/start', {})).body.data.state, id_token: await signDevToken(s.db, 'owner@acme.test') }),
    invalid: [{ body: { state: 'abc' } }, { body: { state: 'abc', id_token: '' } }],
  },
  {
    op: 'POST /api/dashboard/session',
    valid: async () => ({ id_token: await signDevToken(s.db, 'owner@acme.test') }),
    invalid: [{ body: {} }, { body: { id_token: 42 } }],
  },
  {
    op: 'POST /api/dashboard/programs',
    headers: dashboard,
    valid: () => ({ name: 'Docs', domain: 'https://Docs.test/pricing', commission_type: 'percent', commission_rate: '10', attribution_window_days: null }),
    keep: (b) => (made.program = b.data.id),
    invalid: [
      { body: { name: 'Docs', domain: 'docs.test', commission_type: 'percent' } },
      { body: { name: 'Docs', domain: 'not a host', commission_type: 'percent', commission_rate: 10 } },
      { body: { name: 'Docs', domain: 'docs.test', commission_type: 'percent', commission_rate: 5000 } },
      { body: { name: 'Docs', domain: 'docs.test', commission_type: 'bounty', commission_rate: 10 } },
    ],
  },
  {
    op: 'PATCH /api/dashboard/programs/{id}',
    path: () => `/api/dashboard/programs/${made.program}`,
    headers: dashboard,
    valid: () => ({ name: 'Docs 2', commission_hold_days: 0 }),
    invalid: [{ body: {} }, { body: { name: '   ' } }, { body: { lead_auth: 'sometimes' } }, { body: { attribution_window_days: 366 } }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/partners',
    path: () => `/api/dashboard/programs/${made.program}/partners`,
    headers: dashboard,
    valid: () => ({ name: 'Quinn', code: 'quinn', email: 'quinn@p.test' }),
    keep: (b) => (made.partner = b.data.id),
    invalid: [{ body: { name: 'Quinn' } }, { body: { name: 'Quinn', code: 'has space' } }, { body: { name: 'Quinn', code: 'quinn2', email: 'nobody' } }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/links',
    path: () => `/api/dashboard/programs/${made.program}/links`,
    headers: dashboard,
    valid: () => ({ short_link: 'quinn1', partner_id: String(made.partner) }),
    keep: (b) => (made.link = b.data.id),
    invalid: [{ body: { short_link: 'quinn2' } }, { body: { short_link: 'a b', partner_id: 1 } }],
  },
  {
    op: 'PATCH /api/dashboard/links/{id}',
    path: () => `/api/dashboard/links/${made.link}`,
    headers: dashboard,
    valid: () => ({ active: false }),
    invalid: [{ body: {} }, { body: { active: 'no' } }],
  },
  {
    op: 'PUT /api/dashboard/programs/{id}/payments',
    path: () => `/api/dashboard/programs/${made.program}/payments`,
    headers: dashboard,
    valid: () => ({ stripe_account_id: 'acct_docs', webhook_secret: STRIPE_SECRET }),
    keep: (b) => (made.intake = new URL(b.data.intake_url).pathname),
    invalid: [{ body: { stripe_account_id: 'acct_docs' } }, { body: { stripe_account_id: 'docs', webhook_secret: STRIPE_SECRET } }],
  },
  {
    op: 'POST /api/v1/webhooks/stripe/{endpointId}',
    path: () => made.intake,
    headers: stripeSigned,
    valid: () => ({ id: 'evt_openapi_1', type: 'customer.created', data: { object: { id: 'cus_1' } } }),
    invalid: [{ body: { id: 'evt_openapi_2', type: 'customer.created' } }, { body: { id: 'evt_openapi_3', type: '', data: { object: {} } } }],
  },
  {
    op: 'POST /api/v1/webhooks/stripe',
    headers: stripeSigned,
    valid: () => ({ id: 'evt_openapi_4', type: 'customer.created', account: 'acct_docs', data: { object: { id: 'cus_1' } } }),
    invalid: [{ body: { id: 'evt_openapi_5', type: 'customer.created', account: 'acct_docs', data: {} } }],
  },
  {
    op: 'POST /api/v1/track/click',
    valid: () => ({ affiliate_url: 'https://acme.test/pricing?aff=pat20' }),
    invalid: [{ body: {} }, { body: { affiliate_url: '' } }],
  },
  {
    op: 'POST /api/v1/track/lead',
    headers: () => bearer(KEY1),
    valid: async () => ({ click_id: await click(s), customer_key: 'cus_oa' }),
    invalid: [{ body: {} }, { body: { email: 'lead@p.test' } }, { body: { click_id: '  ' } }],
  },
  {
    op: 'POST /api/v1/track/sale',
    headers: () => bearer(KEY1),
    valid: () => ({ transaction_id: 'tx_oa_1', amount_cents: 5000, currency: 'usd', customer_key: 'cus_oa' }),
    invalid: [
      { body: { amount_cents: 5000, customer_key: 'cus_oa' } },
      { body: { transaction_id: 'tx_oa_x', amount_cents: -1, customer_key: 'cus_oa' } },
      { body: { transaction_id: 'tx_oa_x', amount_cents: 100 } },
      // A currency the server does not support is the spec's 422 (4.3), not a 400.
      { body: { transaction_id: 'tx_oa_x', amount_cents: 100, currency: 'GBP', customer_key: 'cus_oa' }, status: 422 },
      { body: { transaction_id: 'tx_oa_x', amount_cents: 100, provider: 'bank', customer_key: 'cus_oa' } },
    ],
  },
  {
    op: 'POST /api/v1/track/refund',
    headers: () => bearer(KEY1),
    valid: () => ({ transaction_id: 'tx_oa_1', reason: 'refund' }),
    invalid: [{ body: {} }, { body: { transaction_id: 'tx_oa_1', reason: 'oops' } }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/commissions/approve',
    path: () => '/api/dashboard/programs/1/commissions/approve',
    headers: dashboard,
    valid: async () => {
      const commission = await pendingCommission('cus_oa2', 'tx_oa_2');
      made.payee = commission.partner.id;
      return { ids: [commission.id] };
    },
    invalid: [{ body: { ids: [] } }, { body: { ids: ['1'] } }, { body: {} }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/commissions/decline',
    path: () => '/api/dashboard/programs/1/commissions/decline',
    headers: dashboard,
    valid: () => ({ ids: [999_999], reason: 'Not one of ours' }),
    invalid: [{ body: { ids: [1] } }, { body: { ids: [1], reason: ' ' } }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/payouts',
    path: () => '/api/dashboard/programs/1/payouts',
    headers: dashboard,
    valid: () => ({ partner_id: made.payee, currency: 'usd', reference: 'OA-1', note: 'docs' }),
    keep: (b) => (made.payout = b.data.id),
    invalid: [{ body: { partner_id: 1, currency: 'GBP' } }, { body: { partner_id: 1, currency: 'USD', method: 'cheque' } }, { body: { partner_id: 1, currency: 'USD', reference: '   ' } }],
  },
  {
    op: 'PATCH /api/dashboard/payouts/{id}',
    path: () => `/api/dashboard/payouts/${made.payout}`,
    headers: dashboard,
    valid: () => ({ status: 'sent' }),
    invalid: [{ body: { status: 'created' } }, { body: {} }],
  },
  {
    op: 'POST /api/dashboard/programs/{id}/payout-batches',
    path: () => '/api/dashboard/programs/1/payout-batches',
    headers: dashboard,
    valid: async () => {
      // A second approved commission, payable whatever the program's payout minimum.
      const minimum = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...cookie }, body: JSON.stringify({ payout_minimum: 0 }) });
      expect(minimum.status, minimum.text).toBe(200);
      const commission = await pendingCommission('cus_oa3', 'tx_oa_3');
      expect((await s.post('/api/dashboard/programs/1/commissions/approve', { ids: [commission.id] }, cookie)).body.data[0].result).toBe('approved');
      return { method: 'paypal', currency: null };
    },
    keep: (b) => (made.batch = b.data.batch_id),
    invalid: [{ body: { method: 'cheque' } }, { body: { currency: 'GBP' } }],
  },
  {
    op: 'PUT /api/dashboard/partners/{id}/payout-details',
    path: () => `/api/dashboard/partners/${made.partner}/payout-details`,
    headers: dashboard,
    valid: () => ({ method: 'paypal', paypal_email: 'quinn@p.test' }),
    invalid: [
      { body: { method: 'bank' } },
      { body: { method: 'paypal', paypal_email: '=cmd@p.test' } },
      { body: { method: 'wise', account_holder: 'Quinn', email: 'quinn@p.test' } },
      { body: { method: 'wise', account_holder: 'Quinn', email: 'quinn@p.test', iban: 'DE89370400440532013000', account_type: 'CURRENT' } },
    ],
  },
  {
    op: 'POST /api/dashboard/partners/{id}/invitations',
    path: () => `/api/dashboard/partners/${made.partner}/invitations`,
    headers: dashboard,
    valid: () => ({ email: ' Quinn.Portal@p.test ' }),
    invalid: [{ body: { email: 'not-an-address' } }, { body: { email: 7 } }],
  },
  {
    op: 'POST /api/dashboard/workspaces/{id}/webhooks',
    path: () => '/api/dashboard/workspaces/1/webhooks',
    headers: dashboard,
    valid: () => ({ url: 'https://hooks.acme.test/docs', event_types: ['sale.created', 'sale.created'], description: null, program_id: 1 }),
    invalid: [{ body: { url: 'https://hooks.acme.test/docs' } }, { body: { url: 'ftp://hooks.acme.test/', event_types: ['sale.created'] } }, { body: { url: 'https://hooks.acme.test/', event_types: ['sale.deleted'] } }],
  },
  {
    op: 'PATCH /api/dashboard/webhooks/{id}',
    path: () => `/api/dashboard/webhooks/${ids.webhook}`,
    headers: dashboard,
    valid: () => ({ description: 'docs' }),
    invalid: [{ body: {} }, { body: { description: 5 } }, { body: { partner_id: 1 } }, { body: { enabled: 'yes' } }],
  },
  {
    op: 'POST /api/v1/cli/init',
    headers: () => bearer(loginToken),
    valid: () => ({ name: 'Cli', domain: 'cli.test', commission_type: 'fixed', commission_rate: 5, advertiser_id: 1 }),
    keep: (b) => (made.cliProgram = b.data.program.id),
    invalid: [{ body: { name: 'Cli' } }, { body: { name: 'Cli', domain: 'cli.test', commission_type: 'fixed', commission_rate: 0 } }],
  },
  {
    op: 'POST /api/v1/cli/programs/{id}/key',
    path: () => `/api/v1/cli/programs/${made.cliProgram}/key`,
    headers: () => bearer(loginToken),
    valid: () => ({ replace: true }),
    invalid: [{ body: { replace: 'yes' } }],
  },
  {
    op: 'POST /api/v1/cli/test-event',
    headers: () => bearer(KEY1),
    valid: () => ({ event_type: 'lead' }),
    invalid: [{ body: {} }, { body: { event_type: 'refund' } }],
  },
  {
    op: 'POST /api/v1/cli/workspaces/{id}/webhooks',
    path: () => '/api/v1/cli/workspaces/1/webhooks',
    headers: () => bearer(loginToken),
    valid: () => ({ url: 'https://hooks.acme.test/cli', event_types: ['lead.created'] }),
    keep: (b) => (made.cliHook = b.data.id),
    invalid: [{ body: { event_types: ['lead.created'] } }],
  },
  {
    op: 'PATCH /api/v1/cli/webhooks/{id}',
    path: () => `/api/v1/cli/webhooks/${made.cliHook}`,
    headers: () => bearer(loginToken),
    valid: () => ({ enabled: false, event_types: ['lead.created', 'lead.settled'] }),
    invalid: [{ body: { event_types: [] } }],
  },
  {
    op: 'PATCH /api/agent/v1/programs/{id}',
    path: () => '/api/agent/v1/programs/1',
    headers: () => bearer(agentKey),
    valid: () => ({ attribution_window_days: 45 }),
    invalid: [{ body: {} }, { body: { attribution_window_days: 0 } }, { body: { commission_type: 'fixed', commission_rate: -1 } }],
  },
  {
    op: 'POST /api/agent/v1/webhooks',
    headers: () => bearer(agentKey),
    valid: () => ({ url: 'https://hooks.acme.test/agent', event_types: ['sale.created'] }),
    keep: (b) => (made.agentHook = b.data.id),
    invalid: [{ body: { url: 'https://user:pw@hooks.acme.test/', event_types: ['sale.created'] } }],
  },
  {
    op: 'PATCH /api/agent/v1/webhooks/{id}',
    path: () => `/api/agent/v1/webhooks/${made.agentHook}`,
    headers: () => bearer(agentKey),
    valid: () => ({ program_id: null }),
    invalid: [{ body: { program_id: 0 } }, { body: { url: 'not a url' } }],
  },
  {
    op: 'POST /api/portal/sign-in',
    valid: () => ({ email: 'Pat.Portal@p.test' }),
    invalid: [{ body: {} }, { body: { email: 'pat' } }],
  },
  {
    op: 'POST /api/portal/sign-in/verify',
    valid: async () => {
      const token = 'openapi-sign-in-token-0123456789';
      await s.db('portal_sign_in_tokens').insert({ person_id: portalPerson, token_hash: sha256Hex(token), created_at: s.clock.now(), expires_at: s.clock.now() + 60_000 });
      return { token };
    },
    invalid: [{ body: {} }, { body: { token: 'short' } }],
  },
  {
    op: 'POST /api/portal/invitations/accept',
    valid: async () => {
      const token = 'openapi-invitation-token-0123456789';
      await s.db('portal_invitations').insert({ partner_id: made.partner, email: 'quinn.portal@p.test', token_hash: sha256Hex(token), invited_by: null, created_at: s.clock.now(), expires_at: s.clock.now() + 60_000 });
      return { token };
    },
    invalid: [{ body: {} }, { body: { token: 12345 } }],
  },
  {
    op: 'PUT /api/portal/partners/{id}/payout-details',
    path: () => '/api/portal/partners/1/payout-details',
    headers: () => portalCookie,
    valid: () => ({ method: 'wise', account_holder: 'Pat', email: 'pat@p.test', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' }),
    invalid: [{ body: { method: 'wise', account_holder: 'Pat', email: 'pat@p.test', iban: 'nope' } }, { body: { method: 'paypal' } }],
  },
  // Applications and link requests (docs/partners.md); program 1 was opened for both in beforeAll.
  {
    op: 'PUT /api/dashboard/programs/{id}/portal-settings',
    path: () => '/api/dashboard/programs/1/portal-settings',
    headers: dashboard,
    valid: () => ({ applications_open: true, link_requests_open: true }),
    invalid: [{ body: { applications_open: true } }, { body: { applications_open: 'yes', link_requests_open: true } }],
  },
  {
    op: 'POST /api/apply/{slug}',
    path: () => `/api/apply/${ids.applySlug}`,
    valid: () => ({ name: 'Robin Blog', email: 'Robin@blog.test', website: 'https://blog.test', promotion: 'Reviews on my blog' }),
    invalid: [{ body: { name: 'Robin', email: 'robin@blog.test' } }, { body: { name: 'Robin', email: 'robin@blog.test', promotion: 'x', website: 'ftp://blog.test' } }, { body: { name: 'Robin', email: 'robin', promotion: 'x' } }],
  },
  {
    op: 'POST /api/dashboard/applications/{id}/decline',
    path: () => `/api/dashboard/applications/${made.application}/decline`,
    headers: dashboard,
    valid: async () => {
      made.application = (await s.get('/api/dashboard/programs/1/applications?status=pending', cookie)).body.data[0].id;
      return { reason: 'Not a fit for now', notify: false };
    },
    invalid: [{ body: { notify: 'yes' } }, { body: { reason: 5 } }],
  },
  {
    op: 'POST /api/portal/partners/{id}/link-requests',
    path: () => '/api/portal/partners/1/link-requests',
    headers: () => portalCookie,
    valid: () => ({ program_id: 1, short_link: 'pat-openapi', note: 'For my newsletter' }),
    keep: (b) => (made.linkRequest = b.data.id),
    invalid: [{ body: { program_id: '1' } }, { body: { program_id: 1, note: 5 } }],
  },
  {
    op: 'POST /api/dashboard/link-requests/{id}/approve',
    path: () => `/api/dashboard/link-requests/${made.linkRequest}/approve`,
    headers: dashboard,
    valid: () => ({ short_link: 'pat-openapi-2' }),
    invalid: [{ body: { short_link: 'a b' } }],
    invalidFirst: true,
  },
  {
    op: 'POST /api/dashboard/link-requests/{id}/decline',
    path: () => `/api/dashboard/link-requests/${made.linkRequest2}/decline`,
    headers: dashboard,
    valid: async () => {
      const asked = await s.raw('/api/portal/partners/1/link-requests', { method: 'POST', headers: { 'content-type': 'application/json', ...portalCookie }, body: JSON.stringify({ program_id: 1 }) });
      expect(asked.status, asked.text).toBe(201);
      made.linkRequest2 = asked.body.data.id;
      return { reason: null };
    },
    invalid: [{ body: { reason: 'x'.repeat(501) } }],
  },
];

async function sendBody(c: BodyCase, body: unknown): Promise<Call> {
  const [method, path] = c.op.split(' ') as [string, string];
  const payload = JSON.stringify(body);
  const res = await s.raw(c.path?.() ?? path, { method, headers: { 'content-type': 'application/json', ...c.headers?.(payload) }, body: payload });
  return { method, path, status: res.status, body: res.body ?? res.text, contentType: res.headers.get('content-type') ?? '' };
}

describe(`[${dbKind}] OpenAPI request bodies`, () => {
  it('every write that reads a body documents it, and every documented body is tried here', () => {
    const writes = operations().filter((o) => !['GET', 'OPTIONS'].includes(o.method)).map((o) => `${o.method} ${o.path}`);
    const documented = writes.filter((key) => requestValidator(key) !== undefined);
    expect(writes.filter((key) => !documented.includes(key) && !readsNoBody(key))).toEqual([]);
    expect(documented.filter((key) => readsNoBody(key))).toEqual([]);
    expect([...BODY_CASES.map((c) => c.op)].sort()).toEqual([...documented].sort());
  });

  for (const c of BODY_CASES) {
    it(`${c.op}: a body the document accepts succeeds; bodies it rejects answer the documented refusal`, async () => {
      const validate = requestValidator(c.op)!;
      const body = await c.valid();
      expect(validate(body), `the document rejects a body the server takes: ${ajv.errorsText(validate.errors)}`).toBe(true);
      const refuse = async () => {
        for (const { body: bad, status = 400 } of c.invalid) {
          expect(validate(bad), `the document accepts ${JSON.stringify(bad)}`).toBe(false);
          const refused = await sendBody(c, bad);
          expect(refused.status, `${JSON.stringify(bad)} → ${JSON.stringify(refused.body)}`).toBe(status);
          expect(checkAnswer(refused)).toEqual([]);
        }
      };
      if (c.invalidFirst) await refuse();
      const ok = await sendBody(c, body);
      expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300);
      expect(checkAnswer(ok)).toEqual([]);
      c.keep?.(ok.body);
      if (!c.invalidFirst) await refuse();
    });
  }
});

/** Query parameters: a query the document accepts succeeds, one it rejects answers 400. */
const QUERY_CASES: Array<{ op: string; path: () => string; headers: () => Record<string, string>; valid: Record<string, string>; invalid: Array<Record<string, string>> }> = [
  { op: 'GET /api/tracking/events/{programId}', path: () => '/api/tracking/events/1', headers: dashboard, valid: { page: '1', pageSize: '5', eventType: 'click', dateFrom: '2020-01-01' }, invalid: [{ pageSize: '1000' }, { eventType: 'refund' }] },
  { op: 'GET /api/v1/cli/auth/poll', path: () => '/api/v1/cli/auth/poll', headers: () => ({}), valid: {}, invalid: [{}] },
  { op: 'GET /api/dashboard/programs/{id}/commissions', path: () => '/api/dashboard/programs/1/commissions', headers: dashboard, valid: { status: 'approved', currency: 'usd', limit: '10' }, invalid: [{ status: 'open' }, { limit: '0' }] },
  { op: 'GET /api/dashboard/programs/{id}/commissions', path: () => '/api/dashboard/programs/1/commissions', headers: dashboard, valid: { format: 'csv', from: '2020-01-01' }, invalid: [{ from: 'yesterday' }] },
  { op: 'GET /api/agent/v1/programs/{id}/commissions', path: () => '/api/agent/v1/programs/1/commissions', headers: () => bearer(agentKey), valid: { partner_id: '1', to: '2099-01-01T00:00:00Z' }, invalid: [{ cursor: '0' }, { currency: 'GBP' }] },
  { op: 'GET /api/dashboard/programs/{id}/balances', path: () => '/api/dashboard/programs/1/balances', headers: dashboard, valid: { partner_id: '1' }, invalid: [{ partner_id: 'x' }] },
  { op: 'GET /api/dashboard/workspaces/{id}/audit-log', path: () => '/api/dashboard/workspaces/1/audit-log', headers: dashboard, valid: { page: '1', pageSize: '10' }, invalid: [{ page: '0' }] },
  { op: 'GET /api/dashboard/webhooks/{id}/deliveries', path: () => `/api/dashboard/webhooks/${ids.webhook}/deliveries`, headers: dashboard, valid: { pageSize: '5' }, invalid: [{ pageSize: '101' }] },
  { op: 'GET /api/agent/v1/webhooks/{id}/deliveries', path: () => `/api/agent/v1/webhooks/${ids.webhook}/deliveries`, headers: () => bearer(agentKey), valid: { page: '2' }, invalid: [{ page: 'two' }] },
  { op: 'GET /api/dashboard/programs/{id}/applications', path: () => '/api/dashboard/programs/1/applications', headers: dashboard, valid: { status: 'declined' }, invalid: [{ status: 'open' }] },
  { op: 'GET /api/dashboard/programs/{id}/link-requests', path: () => '/api/dashboard/programs/1/link-requests', headers: dashboard, valid: { status: 'approved' }, invalid: [{ status: 'all' }] },
  { op: 'GET /api/dashboard/programs/{id}/stats', path: () => '/api/dashboard/programs/1/stats', headers: dashboard, valid: { from: '2026-01-01', to: '2026-01-31', interval: 'day', tz: 'America/New_York', group_by: 'country' }, invalid: [{ interval: 'week' }, { group_by: 'planet' }] },
  { op: 'GET /api/agent/v1/programs/{id}/stats', path: () => '/api/agent/v1/programs/1/stats', headers: () => bearer(agentKey), valid: { from: '2026-01-01', to: '2026-03-31', interval: 'month', group_by: 'partner' }, invalid: [{ interval: 'year' }] },
  { op: 'GET /api/portal/partners/{id}/stats', path: () => '/api/portal/partners/1/stats', headers: () => portalCookie, valid: { program_id: '1', group_by: 'link', from: '2026-01-01', to: '2026-01-07' }, invalid: [{ group_by: 'country' }, { program_id: 'x' }] },
  { op: 'GET /api/dashboard/payout-batches/{id}/export', path: () => `/api/dashboard/payout-batches/${made.batch}/export`, headers: dashboard, valid: {}, invalid: [{ format: 'pdf', currency: 'USD' }] },
];

/** A query's parameters as one object schema (values read from text, as a server reads them). */
const coercing = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
function queryValidator(key: string): ValidateFunction {
  const [method, path] = key.split(' ');
  const params = ((doc.paths[path!]?.[method!.toLowerCase()]?.parameters ?? []) as any[]).filter((p) => p.in === 'query');
  return coercing.compile({ type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, p.schema])), required: params.filter((p) => p.required).map((p) => p.name) });
}

describe(`[${dbKind}] OpenAPI query parameters`, () => {
  it('every operation with query parameters is tried here', () => {
    const withQuery = operations().filter((o) => (o.operation.parameters ?? []).some((p: any) => p.in === 'query')).map((o) => `${o.method} ${o.path}`);
    // The CLI's and the agent API's delivery logs read the dashboard's query (one reader, webhooks/page-query.ts).
    const tried = new Set([...QUERY_CASES.map((c) => c.op), 'GET /api/v1/cli/webhooks/{id}/deliveries', 'GET /api/dashboard/programs/{id}/payouts']);
    expect(withQuery.filter((key) => !tried.has(key))).toEqual([]);
  });

  it('a query the document accepts succeeds; one it rejects answers 400 in the documented envelope', async () => {
    const problems: string[] = [];
    for (const c of QUERY_CASES) {
      const validate = queryValidator(c.op);
      const [method, path] = c.op.split(' ') as [string, string];
      const call = async (query: Record<string, string>): Promise<Call> => {
        const res = await s.raw(`${c.path()}?${new URLSearchParams(query)}`, { method, headers: c.headers() });
        return { method, path, status: res.status, body: res.body ?? res.text, contentType: res.headers.get('content-type') ?? '' };
      };
      // The poll and the export need a live sign-in or a batch to succeed: their valid case is the required parameters' absence refused below.
      if (Object.keys(c.valid).length > 0) {
        if (!validate({ ...c.valid })) problems.push(`${c.op}: the document rejects ${JSON.stringify(c.valid)}: ${coercing.errorsText(validate.errors)}`);
        const ok = await call(c.valid);
        if (ok.status !== 200) problems.push(`${c.op} ${JSON.stringify(c.valid)} → ${ok.status} ${JSON.stringify(ok.body).slice(0, 200)}`);
        problems.push(...checkAnswer(ok));
      }
      for (const bad of c.invalid) {
        if (validate({ ...bad })) problems.push(`${c.op}: the document accepts ${JSON.stringify(bad)}`);
        const refused = await call(bad);
        if (refused.status !== 400) problems.push(`${c.op} ${JSON.stringify(bad)} → ${refused.status} ${JSON.stringify(refused.body).slice(0, 200)}`);
        problems.push(...checkAnswer(refused));
      }
    }
    expect(problems).toEqual([]);
  });
});

describe(`[${dbKind}] OpenAPI document`, () => {
  it('GET /openapi.json answers an OpenAPI 3.1 document whose schemas compile under draft 2020-12', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(doc.servers[0].url).toBe(s.running.deps.config.publicBaseUrl);
    for (const { method, path, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, any>)) {
        for (const media of Object.values((response.content ?? {}) as Record<string, { schema: unknown }>)) validatorFor(`${method} ${path} ${status}`, media.schema);
      }
    }
  });

  it('is valid against the OpenAPI 3.1 schema (the OpenAPI Initiative\'s own, via @seriousme/openapi-schema-validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents each operation of the contract once, with the spec error envelopes', () => {
    expect(operations().length).toBe(API_OPERATIONS.length);
    expect(doc.components.schemas.PlatformError.required).toEqual(['data', 'error']);
    expect(doc.components.schemas.TypedError.required).toEqual(['error']);
  });

  it('answers the spec routes with a success body that validates (click → lead → sale → refund, readiness, status, events)', async () => {
    const clickId = await click(s);
    const calls: Call[] = [];
    const record = async (method: string, path: string, res: Awaited<ReturnType<TestServer['get']>>) =>
      calls.push({ method, path, status: res.status, body: res.body, contentType: res.headers.get('content-type') ?? '' });
    await record('POST', '/api/v1/track/lead', await s.post('/api/v1/track/lead', { click_id: clickId, customer_key: 'cus_openapi' }, bearer(KEY1)));
    await record('POST', '/api/v1/track/sale', await s.post('/api/v1/track/sale', { transaction_id: 'tx_openapi', amount_cents: 5000, customer_key: 'cus_openapi' }, bearer(KEY1)));
    await record('POST', '/api/v1/track/refund', await s.post('/api/v1/track/refund', { transaction_id: 'tx_openapi' }, bearer(KEY1)));
    await record('GET', '/api/v1/programs/me/readiness', await s.get('/api/v1/programs/me/readiness', bearer(KEY1)));
    await record('GET', '/api/v1/cli/status', await s.get('/api/v1/cli/status', bearer(KEY1)));
    await record('GET', '/api/tracking/events/{programId}', await s.get('/api/tracking/events/1', cookie));
    await record('GET', '/api/v1/cli/programs', await s.get('/api/v1/cli/programs', bearer(loginToken)));
    await record('GET', '/api/agent/v1/programs', await s.get('/api/agent/v1/programs', bearer(agentKey)));
    expect(calls.map((c) => c.status)).toEqual(calls.map(() => 200));
    expect(calls.flatMap(checkAnswer)).toEqual([]);
  });

  it('types the audit log, the delivery log and the partner portal, checked on answers that hold entries', async () => {
    const calls: Call[] = [];
    const read = async (path: string, concrete: string, headers: Record<string, string>): Promise<any> => {
      const res = await s.get(concrete, headers);
      calls.push({ method: 'GET', path, status: res.status, body: res.body, contentType: res.headers.get('content-type') ?? '' });
      return res.body;
    };
    expect((await read('/api/dashboard/workspaces/{id}/audit-log', '/api/dashboard/workspaces/1/audit-log', cookie)).data.length).toBeGreaterThan(0);
    const delivery = (await read('/api/dashboard/webhook-deliveries/{id}', `/api/dashboard/webhook-deliveries/${ids.delivery}`, cookie)).data;
    expect([delivery.attempt_log.length, delivery.last_attempt === null]).toEqual([1, false]);
    expect((await read('/api/portal/session', '/api/portal/session', portalCookie)).data.partners.length).toBeGreaterThan(0);
    const overview = (await read('/api/portal/partners/{id}', '/api/portal/partners/1', portalCookie)).data;
    expect([overview.terms, overview.links, overview.commissions, overview.payouts].map((list: unknown[]) => list.length > 0)).toEqual([true, true, true, true]);
    expect((await read('/api/portal/partners/{id}/payout-details', '/api/portal/partners/1/payout-details', portalCookie)).data).not.toBeNull();
    expect(calls.flatMap(checkAnswer)).toEqual([]);
  });

  it('answers every documented operation, without its credential, with a documented status and body', async () => {
    const problems: string[] = [];
    for (const { method, path } of operations()) problems.push(...checkAnswer(await send(method, path, {})));
    expect(problems).toEqual([]);
  });

  it('answers every documented operation, with its credential and real ids, with a documented status and body', async () => {
    const problems: string[] = [];
    const statuses: Record<string, number> = {};
    for (const { method, path, operation } of operations()) {
      const call = await send(method, path, credentialHeaders(operation.security ?? []));
      statuses[`${method} ${path}`] = call.status;
      problems.push(...checkAnswer(call));
    }
    expect(problems).toEqual([]);
    // The credentials were accepted: no operation was refused as unauthenticated...
    expect(Object.entries(statuses).filter(([, status]) => status === 401)).toEqual([]);
    // ...and every read answered its success body, so the success schemas were checked too (except
    // metrics without METRICS_TOKEN, the export of a batch that does not exist, an unknown sign-in poll).
    const reads = Object.entries(statuses).filter(([key]) => key.startsWith('GET ') && !/metrics|export|auth\/poll/.test(key));
    expect(reads.filter(([, status]) => status >= 300)).toEqual([]);
  });
});

/** The app as `start --demo` builds it: every route the server can register, the demo shop's too. */
const fullApp = () => createApp({ ...s.running.deps, demo: { programId: 1, apiKey: KEY1 } });

describe(`[${dbKind}] OpenAPI coverage`, () => {
  it('every route the server registers is in the document or listed, with a reason, as a page', async () => {
    const app = fullApp();
    const documented = new Set(API_OPERATIONS.map((o) => `${o.method} ${o.path}`));
    const listed = new Set(UNDOCUMENTED_ROUTES.map((r) => `${r.method} ${r.path}`));
    const routes = registeredRoutes(app);
    expect(routes.length).toBeGreaterThan(100);
    const missing = routes
      .map((r) => `${r.method} ${typeof r.path === 'string' ? r.path : '(web app)'}`)
      .filter((key) => !documented.has(key) && !listed.has(key));
    expect(missing).toEqual([]);
  });

  it('lists no page that the server does not register (the allow-list cannot go stale)', () => {
    const routes = new Set(registeredRoutes(fullApp()).map((r) => `${r.method} ${typeof r.path === 'string' ? r.path : '(web app)'}`));
    expect(UNDOCUMENTED_ROUTES.filter((r) => !routes.has(`${r.method} ${r.path}`))).toEqual([]);
    for (const o of API_OPERATIONS) expect(routes.has(`${o.method} ${o.path}`), `${o.method} ${o.path}`).toBe(true);
    expect(openApiPath('/a/:id/b/:endpointId')).toBe('/a/{id}/b/{endpointId}');
  });
});
