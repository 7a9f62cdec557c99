/**
 * Outbound webhooks (docs/webhooks.md): endpoints in the dashboard and agent API; deliveries from
 * the outbox, signed as Standard Webhooks says and verified here by two real third-party
 * verifiers (`standardwebhooks` and `svix`); retries with the same webhook-id; rotation; the
 * delivery log, resend and test events; disabling after 3 days of failures; partner postbacks.
 * Receivers are real HTTP servers on 127.0.0.1, so the server runs with
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS (the refusal of private targets is tested without it, at the end).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import type { WebhookEvent } from '@reftrack/contract';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { startReceiver, type ReceivedDelivery, type Receiver } from './helpers/webhook-receiver.js';
import { createAgentKey } from '../src/auth/agent-key.js';

let s: TestServer;
let owner: Record<string, string>;
let member: Record<string, string>;
let receiver: Receiver;
const DAY = 24 * 3600 * 1000;

beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture(), env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  owner = await signInAs(s, 'owner@acme.test');
  member = await signInAs(s, 'member@acme.test');
  receiver = await startReceiver();
});
afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

const send = (method: string, path: string, body?: unknown, who = owner) =>
  s.raw(path, { method, headers: { 'content-type': 'application/json', ...who }, body: body === undefined ? undefined : JSON.stringify(body) });

/** Every committed event handled, and every due delivery attempted. */
async function deliverAll(): Promise<void> {
  await s.running.deps.outbox.drain();
  await s.running.deps.webhooks.runDue();
}

async function createEndpoint(body: Record<string, unknown>, who = owner) {
  const res = await send('POST', '/api/dashboard/workspaces/1/webhooks', { url: receiver.url, ...body }, who);
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: number; secret: string; [k: string]: unknown };
}

/** Verifies with both third-party libraries; answers the parsed event. */
function verified(d: ReceivedDelivery, secret: string): WebhookEvent {
  const a = new StandardWebhook(secret).verify(d.body, d.headers) as WebhookEvent;
  const b = new SvixWebhook(secret).verify(d.body, d.headers) as WebhookEvent;
  expect(b).toEqual(a);
  return a;
}

let customer = 0;
/** A click → lead → sale chain on program 1 (partner 1 by default); answers the sale's response. */
async function chain(aff = 'pat20', key = KEY1) {
  const ck = `wh-${dbKind}-${++customer}`;
  await serverLead(s, await click(s, aff), ck, key);
  const res = await sale(s, { transaction_id: `tx-${ck}`, customer_key: ck }, key);
  expect(res.status, res.text).toBe(200);
  return { customerKey: ck, sale: res.body };
}

/** Removes every endpoint of workspace 1, so each test sees only its own deliveries. */
async function clearEndpoints(): Promise<void> {
  await deliverAll();
  for (const e of (await send('GET', '/api/dashboard/workspaces/1/webhooks')).body.data) await send('DELETE', `/api/dashboard/webhooks/${e.id}`);
  receiver.received.length = 0;
  receiver.answer = 204;
}

describe(`[${dbKind}] webhooks: endpoints in the dashboard`, () => {
  it('an owner creates an endpoint: 201 with a whsec_ signing secret shown once; lists and reads never show it, and it is stored sealed', async () => {
    const created = await createEndpoint({ event_types: ['sale.created'], description: 'CRM sync' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created).toMatchObject({ url: receiver.url, event_types: ['sale.created'], program_id: null, partner_id: null, enabled: true, description: 'CRM sync', disabled_reason: null });
    const list = await send('GET', '/api/dashboard/workspaces/1/webhooks');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(created.secret);
    expect(list.body.data.map((e: { id: number }) => e.id)).toContain(created.id);
    const one = await send('GET', `/api/dashboard/webhooks/${created.id}`);
    expect(one.body.data).not.toHaveProperty('secret');
    const row = await s.db('webhook_endpoints').where({ id: created.id }).first();
    expect(JSON.stringify(row)).not.toContain(created.secret.slice(6));
    expect(row.secrets_sealed).toMatch(/^v1:/);
  });

  it('PATCH changes what is given; enabling, disabling, URL and types are audit-log entries; DELETE removes it', async () => {
    const e = await createEndpoint({ event_types: ['lead.created'] });
    const patched = await send('PATCH', `/api/dashboard/webhooks/${e.id}`, { event_types: ['lead.created', 'lead.settled'], enabled: false, program_id: 2 });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ event_types: ['lead.created', 'lead.settled'], enabled: false, program_id: 2 });
    await s.running.deps.outbox.drain();
    const audit = (await send('GET', '/api/dashboard/workspaces/1/audit-log')).body.data;
    expect(audit[0]).toMatchObject({ action: 'webhook_endpoint.updated' });
    expect(audit[0].summary).toContain('event_types, program_id, enabled');
    expect((await send('DELETE', `/api/dashboard/webhooks/${e.id}`)).status).toBe(200);
    expect((await send('GET', `/api/dashboard/webhooks/${e.id}`)).status).toBe(404);
  });

  it('bad input is the catalogue 400 and creates nothing: URL, event types, a program or partner of another workspace', async () => {
    const before = (await send('GET', '/api/dashboard/workspaces/1/webhooks')).body.data.length;
    const bad = async (body: Record<string, unknown>, message: RegExp) => {
      const res = await send('POST', '/api/dashboard/workspaces/1/webhooks', { url: receiver.url, event_types: ['sale.created'], ...body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toMatch(message);
    };
    await bad({ url: 'ftp://example.com/x' }, /^url must be an absolute http/);
    await bad({ url: 'https://user:pw@example.com/x' }, /^url must be/);
    await bad({ event_types: [] }, /^event_types must be a non-empty array of: lead.created/);
    await bad({ event_types: ['program.created'] }, /^event_types must be/);
    await bad({ program_id: 4 }, /^program_id must be a program of this workspace/);
    await bad({ partner_id: 3 }, /^partner_id must be a partner enrolled/);
    await bad({ partner_id: 1, event_types: ['link.created'] }, /^A partner endpoint can subscribe only to: lead.created, sale.created, commission.created, commission.updated$/);
    expect((await send('GET', '/api/dashboard/workspaces/1/webhooks')).body.data.length).toBe(before);
  });

  it('owners only: a member gets 403; another workspace, its endpoints and deliveries answer 404', async () => {
    expect((await send('GET', '/api/dashboard/workspaces/1/webhooks', undefined, member)).status).toBe(403);
    expect((await send('POST', '/api/dashboard/workspaces/2/webhooks', { url: receiver.url, event_types: ['sale.created'] })).status).toBe(404);
    const outsider = await signInAs(s, 'outsider@else.test');
    const e = await createEndpoint({ event_types: ['sale.created'] });
    expect((await send('GET', `/api/dashboard/webhooks/${e.id}`, undefined, outsider)).status).toBe(404);
    expect((await send('POST', `/api/dashboard/webhooks/${e.id}/rotate-secret`, {}, outsider)).status).toBe(404);
    await send('DELETE', `/api/dashboard/webhooks/${e.id}`);
  });
});

describe(`[${dbKind}] webhooks: the agent API (scope webhooks:manage)`, () => {
  it('an agent key with webhooks:manage creates, lists, tests and deletes endpoints of its workspace', async () => {
    const key = await createAgentKey(s.db, 1, ['webhooks:manage'], 'hooks-bot');
    const agent = (method: string, path: string, body?: unknown) => s.raw(path, { method, headers: { 'content-type': 'application/json', ...bearer(key) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const made = await agent('POST', '/api/agent/v1/webhooks', { url: receiver.url, event_types: ['link.created'] });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data.secret).toMatch(/^whsec_/);
    expect((await agent('GET', '/api/agent/v1/webhooks')).body.data.some((e: { id: number }) => e.id === made.body.data.id)).toBe(true);
    expect((await agent('PATCH', `/api/agent/v1/webhooks/${made.body.data.id}`, { enabled: false })).body.data.enabled).toBe(false);
    expect((await agent('DELETE', `/api/agent/v1/webhooks/${made.body.data.id}`)).status).toBe(200);
  });

  it('a key without the scope gets 403; an endpoint of another workspace is 404', async () => {
    const readOnly = await createAgentKey(s.db, 1, ['programs:read'], 'reader');
    const res = await s.get('/api/agent/v1/webhooks', bearer(readOnly));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('This agent key lacks the webhooks:manage scope');
    const e = await createEndpoint({ event_types: ['sale.created'] });
    const other = await createAgentKey(s.db, 2, ['webhooks:manage'], 'else-bot');
    expect((await s.get(`/api/agent/v1/webhooks/${e.id}`, bearer(other))).status).toBe(404);
    await send('DELETE', `/api/dashboard/webhooks/${e.id}`);
  });
});

describe(`[${dbKind}] webhooks: signed delivery from the outbox`, () => {
  beforeAll(clearEndpoints);
  let firstSecret = '';

  it('a sale is answered first; its sale.created and commission.created arrive signed, verifying with standardwebhooks and svix, carrying id, type, version, time, program and the objects', async () => {
    const e = await createEndpoint({ event_types: ['sale.created', 'commission.created'] });
    firstSecret = e.secret;
    const { sale: answered, customerKey } = await chain();
    // The sale's answer came before any delivery: its event is still waiting in the outbox now.
    await deliverAll();
    const got = await receiver.waitFor(2);
    const events = got.map((d) => verified(d, e.secret));
    const saleEvent = events.find((ev) => ev.type === 'sale.created') as WebhookEvent<'sale.created'>;
    const commissionEvent = events.find((ev) => ev.type === 'commission.created') as WebhookEvent<'commission.created'>;
    expect(saleEvent).toMatchObject({ version: 1, program_id: 1, data: { sale: { id: answered.data.sale_id, program_id: 1, transaction_id: `tx-${customerKey}`, amount_cents: 10_000, currency: 'USD', customer_key: customerKey, partner_id: 1 } } });
    expect(saleEvent.id).toMatch(/^evt_/);
    expect(saleEvent.timestamp).toMatch(/Z$/);
    expect(commissionEvent.data.commission).toMatchObject({ program_id: 1, partner_id: 1, status: 'pending', currency: 'USD' });
    for (const d of got) {
      expect(d.headers['webhook-id']).toBe(JSON.parse(d.body).id);
      expect(Math.abs(Number(d.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(d.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(d.headers['content-type']).toBe('application/json');
    }
    // The payload is the outbox's event as stored.
    const stored = await s.db('outbox_events').where({ event_id: saleEvent.id }).first('payload');
    expect(saleEvent.data).toEqual(JSON.parse(stored.payload));
  });

  it('a tampered body, or another endpoint’s secret, fails both verifiers', async () => {
    const d = receiver.received.find((r) => JSON.parse(r.body).type === 'sale.created')!;
    const tampered = d.body.replace('"amount_cents":10000', '"amount_cents":1');
    expect(tampered).not.toBe(d.body);
    expect(() => new StandardWebhook(firstSecret).verify(tampered, d.headers)).toThrow();
    expect(() => new SvixWebhook(firstSecret).verify(tampered, d.headers)).toThrow();
    const other = await createEndpoint({ event_types: ['lead.created'] });
    expect(() => new StandardWebhook(other.secret).verify(d.body, d.headers)).toThrow();
    expect(() => new SvixWebhook(other.secret).verify(d.body, d.headers)).toThrow();
  });

  it('only subscribed types, and only the filtered program: a program-2 endpoint hears nothing of program 1', async () => {
    await clearEndpoints();
    await createEndpoint({ event_types: ['sale.created'], program_id: 2 });
    await chain();
    await deliverAll();
    expect(receiver.received).toEqual([]);
    expect(Number((await s.db('webhook_deliveries').count({ n: '*' }).first())?.n)).toBe(0);
  });

  it('link.created and partner.enrolled carry the objects as the dashboard API shows them', async () => {
    await clearEndpoints();
    const e = await createEndpoint({ event_types: ['link.created', 'partner.enrolled'] });
    const link = await send('POST', '/api/dashboard/programs/1/links', { short_link: `wh-link-${dbKind}`, partner_id: 1 });
    expect(link.status).toBe(201);
    expect((await send('POST', '/api/dashboard/programs/1/partners', { name: 'Hooked', code: `hooked-${dbKind}` })).status).toBe(201);
    await deliverAll();
    const events = (await receiver.waitFor(2)).map((d) => verified(d, e.secret));
    const linkEvent = events.find((ev) => ev.type === 'link.created') as WebhookEvent<'link.created'>;
    expect(linkEvent.data.link).toEqual(link.body.data);
    const enrolled = events.find((ev) => ev.type === 'partner.enrolled') as WebhookEvent<'partner.enrolled'>;
    expect(enrolled.data).toMatchObject({ program_id: 1, partner: { code: `hooked-${dbKind}` } });
    expect(JSON.stringify(enrolled)).not.toContain('@');
  });
});

describe(`[${dbKind}] webhooks: retries`, () => {
  beforeAll(clearEndpoints);

  it('a receiver that fails then recovers gets the same webhook-id and body again; the log shows each attempt, its code, body start, duration and next retry', async () => {
    const e = await createEndpoint({ event_types: ['sale.created'] });
    receiver.answer = (_d, i) => (i === 0 ? 503 : 200);
    receiver.answerBody = 'busy '.repeat(400);
    await chain();
    await deliverAll();
    expect(receiver.received.length).toBe(1);
    const log = (await send('GET', `/api/dashboard/webhooks/${e.id}/deliveries`)).body;
    expect(log.data).toHaveLength(1);
    const pending = log.data[0];
    expect(pending).toMatchObject({ status: 'pending', attempts: 1, event_type: 'sale.created', last_attempt: { attempt: 1, status_code: 503, succeeded: false } });
    expect(pending.last_attempt.response_body).toHaveLength(1024);
    expect(pending.last_attempt.duration_ms).toEqual(expect.any(Number));
    const retryIn = Date.parse(pending.next_attempt_at) - s.clock.now();
    expect(retryIn).toBeGreaterThan(3_000);
    expect(retryIn).toBeLessThanOrEqual(6_000);
    // Nothing is sent again before the retry is due.
    await s.running.deps.webhooks.runDue();
    expect(receiver.received.length).toBe(1);
    s.clock.offsetMs += 7_000;
    await s.running.deps.webhooks.runDue();
    const [first, second] = await receiver.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    verified(second, e.secret);
    const detail = await send('GET', `/api/dashboard/webhook-deliveries/${pending.id}`);
    expect(detail.body.data).toMatchObject({ status: 'succeeded', attempts: 2, next_attempt_at: null });
    expect(detail.body.data.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200]);
    expect(detail.body.data.payload.id).toBe(first.headers['webhook-id']);
    receiver.answerBody = '';
  });

  it('resend sends a delivered event again with the same webhook-id; send test event delivers a signed webhook.test', async () => {
    await clearEndpoints();
    const e = await createEndpoint({ event_types: ['sale.created'] });
    await chain();
    await deliverAll();
    const [original] = await receiver.waitFor(1);
    const delivery = (await send('GET', `/api/dashboard/webhooks/${e.id}/deliveries`)).body.data[0];
    const resent = await send('POST', `/api/dashboard/webhook-deliveries/${delivery.id}/resend`, {});
    expect(resent.status, resent.text).toBe(202);
    await deliverAll();
    const [, again] = await receiver.waitFor(2);
    expect(again.headers['webhook-id']).toBe(original.headers['webhook-id']);
    const test = await send('POST', `/api/dashboard/webhooks/${e.id}/test`, {});
    expect(test.status).toBe(202);
    await deliverAll();
    const [, , tested] = await receiver.waitFor(3);
    const event = verified(tested, e.secret) as WebhookEvent<'webhook.test'>;
    expect(event).toMatchObject({ type: 'webhook.test', version: 1, data: { endpoint_id: e.id } });
  });

  it('an endpoint whose deliveries fail for 3 days is disabled, with a notice on the endpoint and in the audit log; deliveries stop', async () => {
    await clearEndpoints();
    const e = await createEndpoint({ event_types: ['sale.created'] });
    receiver.answer = 500;
    await chain();
    await deliverAll();
    expect(receiver.received.length).toBe(1);
    s.clock.offsetMs += 3 * DAY + 60_000;
    await s.running.deps.webhooks.runDue();
    const endpoint = (await send('GET', `/api/dashboard/webhooks/${e.id}`)).body.data;
    expect(endpoint).toMatchObject({ enabled: false, disabled_reason: 'failing' });
    expect(endpoint.failing_since).toEqual(expect.any(String));
    await s.running.deps.outbox.drain();
    const audit = (await send('GET', '/api/dashboard/workspaces/1/audit-log')).body.data;
    const notice = audit.find((a: { action: string }) => a.action === 'webhook_endpoint.disabled');
    expect(notice).toMatchObject({ actor: { type: 'system' } });
    expect(notice.summary).toMatch(new RegExp(`^Reftrack disabled webhook endpoint ${e.id} \\(.+\\): every delivery failed since `));
    // And the workspace's owners by e-mail, queued with the disabling (sent by the mail worker).
    const mail = await s.db('mail_messages').where({ kind: 'webhook_endpoint_disabled' }).select('to_address', 'subject');
    expect(mail).toEqual([{ to_address: 'owner@acme.test', subject: `Webhook endpoint ${e.id} disabled: deliveries failed for 3 days` }]);
    // The delivery that failed for 3 days has failed for good; new events queue nothing.
    const log = (await send('GET', `/api/dashboard/webhooks/${e.id}/deliveries`)).body.data;
    expect(log[0]).toMatchObject({ status: 'failed', attempts: 2, next_attempt_at: null });
    const count = receiver.received.length;
    await chain();
    await deliverAll();
    expect(receiver.received.length).toBe(count);
    // Enabled again: the notice goes.
    const on = await send('PATCH', `/api/dashboard/webhooks/${e.id}`, { enabled: true });
    expect(on.body.data).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    receiver.answer = 204;
  });
});

describe(`[${dbKind}] webhooks: secret rotation`, () => {
  beforeAll(clearEndpoints);

  it('after a rotation both secrets sign for 24 hours (either verifies with both libraries); then only the new one', async () => {
    const e = await createEndpoint({ event_types: ['sale.created'] });
    const rotated = await send('POST', `/api/dashboard/webhooks/${e.id}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.data.secret as string;
    expect(fresh).not.toBe(e.secret);
    expect(Date.parse(rotated.body.data.previous_secret_expires_at) - s.clock.now()).toBeGreaterThan(DAY - 60_000);
    await chain();
    await deliverAll();
    const [d] = await receiver.waitFor(1);
    expect(d.headers['webhook-signature'].split(' ')).toHaveLength(2);
    verified(d, fresh);
    verified(d, e.secret);
    s.clock.offsetMs += DAY + 1000;
    await chain();
    await deliverAll();
    const [, later] = await receiver.waitFor(2);
    expect(later.headers['webhook-signature'].split(' ')).toHaveLength(1);
    verified(later, fresh);
    expect(() => new StandardWebhook(e.secret).verify(later.body, later.headers)).toThrow();
    expect(() => new SvixWebhook(e.secret).verify(later.body, later.headers)).toThrow();
  });
});

describe(`[${dbKind}] webhooks: partner postbacks`, () => {
  beforeAll(clearEndpoints);

  it('an endpoint owned for partner 1 receives its sale, lead and commission events only, without customer keys; partner 2’s are not sent', async () => {
    const e = await createEndpoint({ partner_id: 1, event_types: ['lead.created', 'sale.created', 'commission.created'] });
    expect(e.partner_id).toBe(1);
    await chain('sam10'); // partner 2
    await deliverAll();
    expect(receiver.received).toEqual([]);
    await chain('pat20'); // partner 1
    await deliverAll();
    const events = (await receiver.waitFor(3)).map((d) => verified(d, e.secret));
    expect(events.map((ev) => ev.type).sort()).toEqual(['commission.created', 'lead.created', 'sale.created']);
    for (const ev of events) {
      const object = Object.values(ev.data)[0] as { partner_id: number; customer_key?: string | null };
      expect(object.partner_id).toBe(1);
      if ('customer_key' in object) expect(object.customer_key).toBeNull();
    }
    expect(receiver.received.map((d) => d.body).join('')).not.toMatch(/"customer_key":"/);
    expect((await send('PATCH', `/api/dashboard/webhooks/${e.id}`, { partner_id: 2 })).status).toBe(400);
  });
});

describe(`[${dbKind}] webhooks: one attempt at a time`, () => {
  beforeAll(clearEndpoints);

  it('two workers claiming the same due deliveries at once send each exactly once', async () => {
    await createEndpoint({ event_types: ['sale.created', 'commission.created', 'lead.created'] });
    receiver.answer = 204;
    for (let i = 0; i < 5; i++) await chain();
    await s.running.deps.outbox.drain();
    const { WebhookWorker } = await import('../src/jobs/webhook-worker.js');
    const other = new WebhookWorker({ db: s.db, secrets: s.running.deps.secrets, now: () => s.clock.now(), logger: s.running.deps.logger, allowPrivateTargets: true });
    await Promise.all([other.runDue(), s.running.deps.webhooks.runDue(), other.runDue()]);
    await other.stop();
    const ids = receiver.received.map((d) => d.headers['webhook-id']);
    expect(ids).toHaveLength(15);
    expect(new Set(ids).size).toBe(15);
  });

  // runDue() is what tests and operator commands wait on. A background claim (the wake-up after a
  // delivery is queued, or the poll) may lock the due rows first: on PostgreSQL runDue's own claim
  // then skips them and finds none, yet it must still wait for those attempts to be recorded.
  it('runDue waits for the deliveries a background claim took at the same moment, and their outcomes are recorded when it returns', async () => {
    await clearEndpoints();
    const e = await createEndpoint({ event_types: ['sale.created', 'commission.created', 'lead.created'] });
    const { WebhookWorker } = await import('../src/jobs/webhook-worker.js');
    for (let round = 0; round < 5; round++) {
      receiver.answer = 503;
      for (let i = 0; i < 3; i++) await chain();
      await deliverAll();
      // Pending, due again in 3–6 s of the server's clock: its own worker leaves them alone.
      let ahead = 0;
      const worker = new WebhookWorker({ db: s.db, secrets: s.running.deps.secrets, now: () => s.clock.now() + ahead, logger: s.running.deps.logger, allowPrivateTargets: true });
      receiver.answer = 204;
      // The first background claim finds nothing due; the second (asked for while the first runs)
      // starts as the first ends, seeing them due — at the moment runDue claims too.
      worker.poke();
      worker.poke();
      ahead = 7_000;
      await worker.runDue();
      const log = (await send('GET', `/api/dashboard/webhooks/${e.id}/deliveries`)).body.data as Array<{ status: string; attempts: number }>;
      expect(log.map((d) => `${d.status}/${d.attempts}`)).toEqual(log.map(() => 'succeeded/2'));
      await worker.stop();
    }
  });
});

// The receiver on 127.0.0.1 would record any request that got through: the refusals can fail.
describe(`[${dbKind}] webhooks: private targets refused`, () => {
  let guarded: TestServer;
  let guardedOwner: Record<string, string>;
  beforeAll(async () => {
    guarded = await startTestServer({ fixture: accountsFixture() });
    guardedOwner = await signInAs(guarded, 'owner@acme.test');
    receiver.received.length = 0;
  });
  afterAll(() => guarded?.close());

  it('loopback, private, link-local and metadata targets — by address or by a name resolving to one — are refused at delivery, and the log says why', async () => {
    const targets = [
      `http://127.0.0.1:${receiver.port}/hooks`,
      `http://localhost:${receiver.port}/hooks`,
      `http://[::1]:${receiver.port}/hooks`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/hooks`,
      `http://127.1:${receiver.port}/hooks`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/hooks',
      'http://192.168.1.1/hooks',
      'http://[fd00:ec2::254]/hooks',
    ];
    const ids: number[] = [];
    for (const url of targets) {
      const res = await guarded.raw('/api/dashboard/workspaces/1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json', ...guardedOwner }, body: JSON.stringify({ url, event_types: ['sale.created'] }) });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.data.id);
      expect((await guarded.raw(`/api/dashboard/webhooks/${res.body.data.id}/test`, { method: 'POST', headers: { 'content-type': 'application/json', ...guardedOwner }, body: '{}' })).status).toBe(202);
    }
    await guarded.running.deps.webhooks.runDue();
    expect(receiver.received).toEqual([]);
    for (const id of ids) {
      const log = (await guarded.raw(`/api/dashboard/webhooks/${id}/deliveries`, { headers: guardedOwner })).body.data;
      expect(log[0].status).toBe('pending');
      expect(log[0].last_attempt).toMatchObject({ status_code: null, succeeded: false });
      expect(log[0].last_attempt.error).toMatch(/^Refused: .+ is a private, loopback, link-local or metadata address/);
    }
  });
});

