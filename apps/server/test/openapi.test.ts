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
import { AGENT_SCOPES, API_OPERATIONS, openApiPath, PORTAL_SESSION_COOKIE, UNDOCUMENTED_ROUTES } from '@reftrack/contract';
import { createApp, registeredRoutes } from '../src/app.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { createPortalSession } from '../src/auth/portal-session.js';
import { insertId } from '../src/db/insert-id.js';
import { accountsFixture, cliLoginAs, signInAs } from './helpers/accounts.js';
import { click } from './helpers/flows.js';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is read as plain JSON */
type Doc = any;

let s: TestServer;
let doc: Doc;
let cookie: Record<string, string>;
let loginToken: string;
let agentKey: string;
let portalCookie: Record<string, string>;
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
  const [type, media] = Object.entries(response.content as Record<string, { schema: unknown }>)[0]!;
  if (!call.contentType.startsWith(type)) return [`${call.method} ${call.path} ${call.status}: content type ${call.contentType}, documented ${type}`];
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
  s = await startTestServer({ fixture: accountsFixture() });
  const res = await s.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  cookie = await signInAs(s, 'owner@acme.test');
  loginToken = await cliLoginAs(s, 'owner@acme.test');
  agentKey = await createAgentKey(s.db, 1, [...AGENT_SCOPES], 'openapi');
  // A partner person with access to partner 1, signed in to the portal (docs/partners.md).
  const person = await insertId(s.db, 'portal_people', { email: 'pat.portal@p.test', created_at: Date.now() });
  await s.db('partner_portal_access').insert({ partner_id: 1, person_id: person, created_at: Date.now() });
  portalCookie = { cookie: `${PORTAL_SESSION_COOKIE}=${(await createPortalSession(s.db, person, Date.now())).token}` };
  // Program 1 open for applications, so its public page answers (docs/partners.md, "Applications").
  const opened = await s.raw('/api/dashboard/programs/1/portal-settings', { method: 'PUT', headers: { ...cookie, 'content-type': 'application/json' }, body: JSON.stringify({ applications_open: true, link_requests_open: true }) });
  expect(opened.status, opened.text).toBe(200);
  ids.applySlug = String(opened.body.data.apply_url).split('/').pop()!;
  const hook = await s.post('/api/dashboard/workspaces/1/webhooks', { url: 'https://hooks.acme.test/reftrack', event_types: ['sale.created'] }, cookie);
  expect(hook.status, hook.text).toBe(201);
  ids.webhook = String(hook.body.data.id);
  const test = await s.post(`/api/dashboard/webhooks/${ids.webhook}/test`, {}, cookie);
  expect(test.status, test.text).toBeLessThan(300);
  const deliveries = await s.get(`/api/dashboard/webhooks/${ids.webhook}/deliveries`, cookie);
  ids.delivery = String(deliveries.body?.data?.[0]?.id ?? 1);
});
afterAll(() => s?.close());

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

  it('answers writes with valid bodies with a success body that validates (dashboard, CLI, agent)', async () => {
    const calls: Call[] = [];
    const write = async (method: string, path: string, concrete: string, body: unknown, headers: Record<string, string>) => {
      const res = await s.raw(concrete, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      calls.push({ method, path, status: res.status, body: res.body, contentType: res.headers.get('content-type') ?? '' });
      return res.body;
    };
    const program = await write('POST', '/api/dashboard/programs', '/api/dashboard/programs', { name: 'Docs', domain: 'docs.test', commission_type: 'percent', commission_rate: 10 }, cookie);
    const pid = program?.data?.id;
    await write('PATCH', '/api/dashboard/programs/{id}', `/api/dashboard/programs/${pid}`, { name: 'Docs 2' }, cookie);
    const partner = await write('POST', '/api/dashboard/programs/{id}/partners', `/api/dashboard/programs/${pid}/partners`, { name: 'Quinn', code: 'quinn', email: 'quinn@p.test' }, cookie);
    const link = await write('POST', '/api/dashboard/programs/{id}/links', `/api/dashboard/programs/${pid}/links`, { short_link: 'quinn1', partner_id: partner?.data?.id }, cookie);
    await write('PATCH', '/api/dashboard/links/{id}', `/api/dashboard/links/${link?.data?.id}`, { active: false }, cookie);
    await write('PUT', '/api/dashboard/programs/{id}/payments', `/api/dashboard/programs/${pid}/payments`, { stripe_account_id: 'acct_docs', webhook_secret: 'whsec_docs' }, cookie);
    await write('PUT', '/api/dashboard/partners/{id}/payout-details', `/api/dashboard/partners/${partner?.data?.id}/payout-details`, { method: 'paypal', paypal_email: 'quinn@p.test' }, cookie);
    await write('PATCH', '/api/dashboard/webhooks/{id}', `/api/dashboard/webhooks/${ids.webhook}`, { description: 'docs' }, cookie);
    await write('POST', '/api/v1/cli/init', '/api/v1/cli/init', { name: 'Cli', domain: 'cli.test', commission_type: 'fixed', commission_rate: 5 }, bearer(loginToken));
    await write('POST', '/api/v1/cli/test-event', '/api/v1/cli/test-event', { event_type: 'click' }, bearer(KEY1));
    await write('POST', '/api/v1/cli/workspaces/{id}/webhooks', '/api/v1/cli/workspaces/1/webhooks', { url: 'https://hooks.acme.test/cli', event_types: ['lead.created'] }, bearer(loginToken));
    await write('PATCH', '/api/agent/v1/programs/{id}', '/api/agent/v1/programs/1', { attribution_window_days: 45 }, bearer(agentKey));
    await write('POST', '/api/agent/v1/webhooks', '/api/agent/v1/webhooks', { url: 'https://hooks.acme.test/agent', event_types: ['sale.created'] }, bearer(agentKey));
    expect(calls.filter((c) => c.status >= 300).map((c) => `${c.method} ${c.path} ${c.status} ${JSON.stringify(c.body)}`)).toEqual([]);
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
