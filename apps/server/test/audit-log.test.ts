/**
 * The audit log (docs/security.md, "Audit log"): the dashboard's, agents' and the operator's
 * actions — who, what, when, from which address — listed for a workspace's owners, newest first.
 * The outbox's consumer writes the entries; the tests drain it instead of waiting for its poll.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, cliLoginAs, signInAs } from './helpers/accounts.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { setSuspended } from '../src/ops/accounts.js';
import { markKeyForRotation } from '../src/ops/program-keys.js';

let s: TestServer;
let owner: Record<string, string>;
let member: Record<string, string>;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
  member = await signInAs(s, 'member@acme.test');
});
afterAll(() => s?.close());

const send = (method: string, path: string, body?: unknown, who = owner, extra: Record<string, string> = {}) =>
  s.raw(path, { method, headers: { 'content-type': 'application/json', ...who, ...extra }, body: body === undefined ? undefined : JSON.stringify(body) });

/** The workspace's entries once every committed event has been handled. */
async function auditLog(workspace = 1, query = '', who = owner) {
  await s.running.deps.outbox.drain();
  return send('GET', `/api/dashboard/workspaces/${workspace}/audit-log${query}`, undefined, who);
}

describe(`[${dbKind}] audit log: dashboard actions`, () => {
  it('regenerating a key, connecting payments, creating and switching a link: each an entry naming the owner, the address and what changed, newest first', async () => {
    expect((await send('POST', '/api/dashboard/programs/1/key', {}, owner, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(200);
    expect((await send('PUT', '/api/dashboard/programs/2/payments', { stripe_account_id: 'acct_1Audit', webhook_secret: 'whsec_auditSecret' })).status).toBe(200);
    const link = await send('POST', '/api/dashboard/programs/1/links', { short_link: `audit-${dbKind}`, partner_id: 1 });
    expect(link.status, link.text).toBe(201);
    expect((await send('PATCH', `/api/dashboard/links/${link.body.data.id}`, { active: false })).status).toBe(200);
    const res = await auditLog();
    expect(res.status, res.text).toBe(200);
    const actions = res.body.data.map((e: { action: string }) => e.action);
    expect(actions.slice(0, 4)).toEqual(['link.updated', 'link.created', 'payments.connected', 'program_key.regenerated']);
    const [switched, created, connected, regenerated] = res.body.data;
    expect(regenerated).toMatchObject({ program_id: 1, actor: { type: 'account', label: 'owner@acme.test' }, summary: 'owner@acme.test generated a new key for program 1 (the previous key stopped working)' });
    expect(regenerated.actor.id).toEqual(expect.any(Number));
    expect(regenerated.occurred_at).toMatch(/Z$/);
    expect(connected.summary).toBe('owner@acme.test connected Stripe account acct_1Audit to program 2 (signing secret set)');
    expect(created.summary).toBe(`owner@acme.test created referral link audit-${dbKind} in program 1`);
    expect(switched.summary).toBe(`owner@acme.test changed active of referral link audit-${dbKind} (active: false)`);
    expect(res.body.meta.pagination).toMatchObject({ page: 1, pageSize: 50 });
  });

  it('no entry carries a secret: the signing secret is in no row or answer', async () => {
    const res = await auditLog();
    expect(res.text).not.toContain('whsec_auditSecret');
    const rows = await s.db('audit_log').select('details');
    for (const r of rows) expect(r.details).not.toContain('whsec_');
    const events = await s.db('outbox_events').select('payload');
    for (const e of events) expect(e.payload).not.toContain('whsec_');
  });

  it('a setting with nothing to change (a link switched to what it is) writes no entry', async () => {
    const before = (await auditLog()).body.meta.pagination.total;
    const link = (await send('GET', '/api/dashboard/programs/1/links')).body.data.find((l: { short_link: string }) => l.short_link === 'pat20');
    expect((await send('PATCH', `/api/dashboard/links/${link.id}`, { active: true })).status).toBe(200);
    expect((await auditLog()).body.meta.pagination.total).toBe(before);
  });

  it('enrolling a partner and changing a program are entries; creating a program names it', async () => {
    expect((await send('POST', '/api/dashboard/programs/1/partners', { name: 'Audited', code: `aud-${dbKind}` })).status).toBe(201);
    expect((await send('PATCH', '/api/dashboard/programs/1', { commission_rate: 25 })).status).toBe(200);
    const made = await send('POST', '/api/dashboard/programs', { name: 'Audit shop', domain: 'audit.example.com', commission_type: 'percent', commission_rate: 5 });
    expect(made.status).toBe(201);
    const [createdProgram, updated, enrolled] = (await auditLog()).body.data;
    expect(enrolled.summary).toBe(`owner@acme.test enrolled partner aud-${dbKind} in program 1`);
    expect(updated.summary).toBe('owner@acme.test changed commission_rate of program 1');
    expect(createdProgram.summary).toBe(`owner@acme.test created program ${made.body.data.id} (Audit shop)`);
  });
});

describe(`[${dbKind}] audit log: who may read it`, () => {
  it('owners only: a member gets 403 and an outsider’s workspace id is 404', async () => {
    expect((await auditLog(1, '', member)).status).toBe(403);
    expect((await auditLog(2)).status).toBe(404);
  });

  it('pages: pageSize and page select a slice; a bad page is the listing’s 400', async () => {
    const all = (await auditLog()).body;
    const second = (await auditLog(1, '?page=2&pageSize=2')).body;
    expect(second.data.map((e: { id: number }) => e.id)).toEqual(all.data.slice(2, 4).map((e: { id: number }) => e.id));
    expect((await auditLog(1, '?page=0')).status).toBe(400);
  });
});

describe(`[${dbKind}] audit log: agents, CLI tokens and the operator`, () => {
  it('an agent key’s program change names the key; the operator’s key actions name the operator', async () => {
    const key = await createAgentKey(s.db, 1, ['programs:write'], 'release-bot');
    const res = await s.raw('/api/agent/v1/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...bearer(key) }, body: JSON.stringify({ attribution_window_days: 45 }) });
    expect(res.status, res.text).toBe(200);
    await markKeyForRotation(s.db, 1, Date.now() + 7 * 86_400_000);
    const [marked, changed, created] = (await auditLog()).body.data;
    expect(created).toMatchObject({ action: 'agent_key.created', actor: { type: 'operator' } });
    expect(created.summary).toMatch(/with scopes programs:write$/);
    expect(changed).toMatchObject({ action: 'program.updated', actor: { type: 'agent_key' } });
    expect(changed.summary).toMatch(/^Agent key \d+ changed attribution_window_days of program 1$/);
    expect(marked).toMatchObject({ action: 'program_key.rotation_marked', actor: { type: 'operator' } });
  });

  it('an account-level action (a CLI token revoked, a suspension) is listed in each workspace the account belongs to', async () => {
    const token = await cliLoginAs(s, 'member@acme.test');
    const listed = (await send('GET', '/api/dashboard/cli-tokens', undefined, member)).body.data;
    expect((await send('POST', `/api/dashboard/cli-tokens/${listed[0].id}/revoke`, {}, member)).status).toBe(200);
    expect(token).toBeTruthy();
    await setSuspended(s.db, 'outsider@else.test', true);
    await setSuspended(s.db, 'outsider@else.test', false);
    const acme = (await auditLog(1)).body.data;
    expect(acme[0]).toMatchObject({ action: 'cli_token.revoked', actor: { type: 'account', label: 'member@acme.test' } });
    expect(acme.some((e: { action: string }) => e.action === 'account.suspended')).toBe(false);
    await s.running.deps.outbox.drain();
    const rows = await s.db('audit_log').where({ workspace_id: 2 }).orderBy('id').select('action', 'actor_type');
    expect(rows).toEqual([
      { action: 'account.suspended', actor_type: 'operator' },
      { action: 'account.restored', actor_type: 'operator' },
    ]);
  });

  it('tracking traffic (clicks, leads, sales) is not audited', async () => {
    await s.running.deps.outbox.drain();
    const before = Number((await s.db('audit_log').count({ n: '*' }).first())?.n);
    await s.post('/api/v1/track/click', { affiliate_url: 'https://acme.test/?aff=pat20' });
    await s.running.deps.outbox.drain();
    expect(Number((await s.db('audit_log').count({ n: '*' }).first())?.n)).toBe(before);
  });
});
