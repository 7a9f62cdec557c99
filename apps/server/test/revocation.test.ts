/**
 * Revocation (hardening issue, item 7): `reftrack logout` revokes its login token on the server;
 * each account lists and revokes its own CLI tokens, a workspace owner its agent keys; a revoked
 * credential is refused with its routes' usual 401 and no longer counts as a verified rate subject.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, formatMessage } from '@reftrack/contract';
import { bearer, dbKind, freshIp, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, cliLoginAs, signInAs } from './helpers/accounts.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { sha256Hex } from '../src/auth/secret-hash.js';

let s: TestServer;
let owner: Record<string, string>;
let member: Record<string, string>;
let restricted: Record<string, string>;
let outsider: Record<string, string>;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
  member = await signInAs(s, 'member@acme.test');
  restricted = await signInAs(s, 'restricted@acme.test');
  outsider = await signInAs(s, 'outsider@else.test');
});
afterAll(() => s?.close());

const LOGOUT = '/api/v1/cli/auth/logout';
const platform = (status: number, name: string, message: string) => ({ data: null, error: { status, name, message, details: {} } });
const initBody = { name: 'Shop', domain: 'shop.test', commission_type: 'fixed', commission_rate: 5 };

async function withClock<T>(offsetMs: number, work: () => Promise<T>): Promise<T> {
  s.clock.offsetMs = offsetMs;
  try {
    return await work();
  } finally {
    s.clock.offsetMs = 0;
  }
}

describe(`[${dbKind}] reftrack logout revokes the login token (POST /api/v1/cli/auth/logout)`, () => {
  it('revokes the token it is sent: programs and init then answer their 7.6 “invalid or expired” 401s', async () => {
    const token = await cliLoginAs(s, 'owner@acme.test');
    expect((await s.get('/api/v1/cli/programs', bearer(token))).status).toBe(200);
    const out = await s.post(LOGOUT, {}, bearer(token));
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual({ success: true, data: { revoked: true, revoked_at: expect.any(String) } });
    expect(Math.abs(Date.parse(out.body.data.revoked_at) - Date.now())).toBeLessThan(60_000);
    expect(out.headers.get('x-request-id')).toBeTruthy();
    expect((await s.get('/api/v1/cli/programs', bearer(token))).body).toEqual(platform(401, 'UnauthorizedError', ERRORS.cliProgramsInvalidToken.message));
    expect((await s.post('/api/v1/cli/init', initBody, bearer(token))).body).toEqual(platform(401, 'UnauthorizedError', ERRORS.cliInitInvalidToken.message));
  });

  it('is idempotent: a second logout with the same token answers the first revocation time', async () => {
    const token = await cliLoginAs(s, 'owner@acme.test');
    const first = await s.post(LOGOUT, {}, bearer(token));
    const second = await withClock(5 * 60_000, () => s.post(LOGOUT, {}, bearer(token)));
    expect(second.status).toBe(200);
    expect(second.body.data.revoked_at).toBe(first.body.data.revoked_at);
  });

  it('revokes only that token: the account’s other tokens keep working', async () => {
    const [a, b] = [await cliLoginAs(s, 'owner@acme.test'), await cliLoginAs(s, 'owner@acme.test')];
    expect((await s.post(LOGOUT, {}, bearer(a))).status).toBe(200);
    expect((await s.get('/api/v1/cli/programs', bearer(a))).status).toBe(401);
    expect((await s.get('/api/v1/cli/programs', bearer(b))).status).toBe(200);
  });

  it('without a token, or with one the server does not know or that expired, answers 401: nothing to revoke', async () => {
    expect((await s.post(LOGOUT, {})).body).toEqual(platform(401, 'UnauthorizedError', ERRORS.cliLogoutMissingAuth.message));
    expect((await s.post(LOGOUT, {}, bearer('rtl_nobody_knows_this_token'))).body).toEqual(platform(401, 'UnauthorizedError', ERRORS.cliLogoutInvalidToken.message));
    const token = await cliLoginAs(s, 'member@acme.test');
    const expired = await withClock(91 * 86_400_000, () => s.post(LOGOUT, {}, bearer(token)));
    expect(expired.body).toEqual(platform(401, 'UnauthorizedError', ERRORS.cliLogoutInvalidToken.message));
  });

  it('a suspended account can still give up its token', async () => {
    const token = await cliLoginAs(s, 'restricted@acme.test');
    await s.db('accounts').where({ email: 'restricted@acme.test' }).update({ suspended: true });
    try {
      expect((await s.post(LOGOUT, {}, bearer(token))).status).toBe(200);
    } finally {
      await s.db('accounts').where({ email: 'restricted@acme.test' }).update({ suspended: false });
    }
    expect((await s.get('/api/v1/cli/programs', bearer(token))).status).toBe(401);
  });

  it('a revoked token is no longer a verified rate subject: its requests count per client address', async () => {
    const token = await cliLoginAs(s, 'owner@acme.test');
    for (let i = 0; i < 3; i++) await s.get('/api/v1/cli/programs', bearer(token));
    // Verified: one bucket for the token, whichever address it comes from.
    expect((await s.get('/api/v1/cli/programs', { ...bearer(token), 'x-forwarded-for': freshIp() })).headers.get('x-ratelimit-remaining')).toBe('56');
    expect((await s.post(LOGOUT, {}, bearer(token))).status).toBe(200);
    const after = await s.get('/api/v1/cli/programs', { ...bearer(token), 'x-forwarded-for': freshIp() });
    expect(after.status).toBe(401);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('59');
  });
});

describe(`[${dbKind}] Access: each account lists and revokes its own CLI tokens`, () => {
  it('lists the account’s tokens with label, times and revocation, never the token or its hash', async () => {
    const token = await cliLoginAs(s, 'member@acme.test', 'reftrack-cli/9.9.9 node/v20.0.0 (listing)');
    const res = await s.get('/api/dashboard/cli-tokens', member);
    expect(res.status).toBe(200);
    const mine = res.body.data.find((t: { label: string | null }) => t.label === 'reftrack-cli/9.9.9 node/v20.0.0 (listing)');
    expect(mine).toEqual({ id: expect.any(Number), label: 'reftrack-cli/9.9.9 node/v20.0.0 (listing)', created_at: expect.any(String), last_used_at: null, expires_at: expect.any(String), revoked_at: null });
    expect(Date.parse(mine.expires_at) - Date.parse(mine.created_at)).toBe(90 * 86_400_000);
    expect(res.text).not.toContain(token);
    expect(res.text).not.toContain(sha256Hex(token));
    // Newest first, and only this account's.
    const ids = res.body.data.map((t: { id: number }) => t.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => b - a));
    const memberId = (await s.db('accounts').where({ email: 'member@acme.test' }).first('id')).id;
    const foreign = await s.db('cli_tokens').whereNot({ account_id: memberId }).pluck('id');
    expect(ids.filter((id: number) => foreign.includes(id))).toEqual([]);
  });

  it('the label is the User-Agent of the poll that received the token, printable and cut to 200 characters', async () => {
    await cliLoginAs(s, 'outsider@else.test', `w\u00e9ird agent ${'x'.repeat(300)}`);
    const list = (await s.get('/api/dashboard/cli-tokens', outsider)).body.data;
    expect(list[0].label).toBe(`wird agent ${'x'.repeat(300)}`.slice(0, 200));
  });

  it('revokes one of its own tokens: that token is refused at once, the list shows when', async () => {
    const token = await cliLoginAs(s, 'owner@acme.test', 'reftrack-cli/revoke-me');
    const row = (await s.get('/api/dashboard/cli-tokens', owner)).body.data.find((t: { label: string }) => t.label === 'reftrack-cli/revoke-me');
    const res = await s.post(`/api/dashboard/cli-tokens/${row.id}/revoke`, {}, owner);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: row.id, revoked_at: expect.any(String) });
    expect((await s.get('/api/v1/cli/programs', bearer(token))).body.error.message).toBe(ERRORS.cliProgramsInvalidToken.message);
    const again = await s.post(`/api/dashboard/cli-tokens/${row.id}/revoke`, {}, owner);
    expect(again.body.data.revoked_at).toBe(res.body.data.revoked_at);
    const listed = (await s.get('/api/dashboard/cli-tokens', owner)).body.data.find((t: { id: number }) => t.id === row.id);
    expect(listed.revoked_at).toBe(res.body.data.revoked_at);
  });

  it('another account’s token answers 404 like a missing one — a workspace owner cannot revoke a member’s token', async () => {
    const token = await cliLoginAs(s, 'member@acme.test', 'reftrack-cli/members-own');
    const row = (await s.get('/api/dashboard/cli-tokens', member)).body.data.find((t: { label: string }) => t.label === 'reftrack-cli/members-own');
    for (const path of [`/api/dashboard/cli-tokens/${row.id}/revoke`, '/api/dashboard/cli-tokens/999999/revoke', '/api/dashboard/cli-tokens/abc/revoke']) {
      const res = await s.post(path, {}, owner);
      expect(res.body, path).toEqual(platform(404, 'NotFoundError', ERRORS.cliTokenNotFound.message));
    }
    expect((await s.get('/api/v1/cli/programs', bearer(token))).status).toBe(200);
    expect((await s.get('/api/dashboard/cli-tokens', owner)).body.data.map((t: { id: number }) => t.id)).not.toContain(row.id);
  });

  it('refuses a cross-site revoke and a request without a session', async () => {
    const res = await s.raw('/api/dashboard/cli-tokens/1/revoke', { method: 'POST', headers: { ...owner, 'content-type': 'application/json', origin: 'https://evil.test' }, body: '{}' });
    expect(res.body.error.message).toBe(ERRORS.crossSiteRefused.message);
    expect((await s.get('/api/dashboard/cli-tokens')).status).toBe(401);
  });

  it('last_used_at is written on use, at most once a minute', async () => {
    const token = await cliLoginAs(s, 'outsider@else.test', 'reftrack-cli/last-used');
    const lastUsed = async () => (await s.get('/api/dashboard/cli-tokens', outsider)).body.data.find((t: { label: string }) => t.label === 'reftrack-cli/last-used').last_used_at as string | null;
    expect(await lastUsed()).toBeNull();
    await s.get('/api/v1/cli/programs', bearer(token));
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await withClock(30_000, () => s.get('/api/v1/cli/programs', bearer(token)));
    expect(await lastUsed()).toBe(first);
    await withClock(61_000, () => s.get('/api/v1/cli/programs', bearer(token)));
    expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(Date.parse(first!) + 60_000);
  });

  it('expired tokens are not listed', async () => {
    await cliLoginAs(s, 'owner@acme.test', 'reftrack-cli/will-expire');
    const labels = async () => (await s.get('/api/dashboard/cli-tokens', owner)).body.data.map((t: { label: string }) => t.label);
    expect(await labels()).toContain('reftrack-cli/will-expire');
    // A token lives 90 days, a dashboard session 14: move the token's expiry instead of the clock.
    await s.db('cli_tokens').where({ label: 'reftrack-cli/will-expire' }).update({ expires_at: Date.now() - 1 });
    expect(await labels()).not.toContain('reftrack-cli/will-expire');
  });
});

describe(`[${dbKind}] Access: a workspace owner lists and revokes its agent keys`, () => {
  let key: string;
  let keyId: number;
  beforeAll(async () => {
    key = await createAgentKey(s.db, 1, ['programs:read'], 'pricing bot');
    keyId = (await s.db('agent_keys').where({ key_hash: sha256Hex(key) }).first('id')).id;
    await createAgentKey(s.db, 2, ['programs:read'], 'else bot');
  });

  it('lists the workspace’s keys masked, with name, scopes and times; never the key or its hash', async () => {
    const res = await s.get('/api/dashboard/workspaces/1/agent-keys', owner);
    expect(res.status, res.text).toBe(200);
    const row = res.body.data.find((k: { id: number }) => k.id === keyId);
    expect(row).toEqual({ id: keyId, workspace_id: 1, name: 'pricing bot', scopes: ['programs:read'], key_masked: `••••••••${key.slice(-4)}`, created_at: expect.any(String), last_used_at: null, revoked_at: null });
    expect(res.body.data.every((k: { workspace_id: number }) => k.workspace_id === 1)).toBe(true);
    expect(res.text).not.toContain(key);
    expect(res.text).not.toContain(sha256Hex(key));
  });

  it('members and restricted members are refused with 403; another workspace answers 404', async () => {
    const denied = formatMessage(ERRORS.permissionDenied.message, { permission: 'agent_keys:manage' });
    for (const who of [member, restricted]) {
      expect((await s.get('/api/dashboard/workspaces/1/agent-keys', who)).body).toEqual(platform(403, 'ForbiddenError', denied));
      expect((await s.post(`/api/dashboard/agent-keys/${keyId}/revoke`, {}, who)).body).toEqual(platform(403, 'ForbiddenError', denied));
    }
    expect((await s.get('/api/dashboard/workspaces/1/agent-keys', outsider)).body).toEqual(platform(404, 'NotFoundError', ERRORS.workspaceNotFound.message));
    expect((await s.get('/api/dashboard/workspaces/999/agent-keys', owner)).body).toEqual(platform(404, 'NotFoundError', ERRORS.workspaceNotFound.message));
    expect((await s.post(`/api/dashboard/agent-keys/${keyId}/revoke`, {}, outsider)).body).toEqual(platform(404, 'NotFoundError', ERRORS.agentKeyNotFound.message));
    expect((await s.post('/api/dashboard/agent-keys/999999/revoke', {}, owner)).body).toEqual(platform(404, 'NotFoundError', ERRORS.agentKeyNotFound.message));
    expect((await s.get('/api/agent/v1/programs', bearer(key))).status).toBe(200);
  });

  it('last_used_at is written on use, at most once a minute', async () => {
    const lastUsed = async () => (await s.get('/api/dashboard/workspaces/1/agent-keys', owner)).body.data.find((k: { id: number }) => k.id === keyId).last_used_at as string | null;
    await s.get('/api/agent/v1/programs', bearer(key));
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await withClock(30_000, () => s.get('/api/agent/v1/programs', bearer(key)));
    expect(await lastUsed()).toBe(first);
    await withClock(61_000, () => s.get('/api/agent/v1/programs', bearer(key)));
    expect(Date.parse((await lastUsed())!)).toBeGreaterThanOrEqual(Date.parse(first!) + 60_000);
  });

  it('an owner revokes a key: it is refused with `Invalid agent key` at once; revoking again keeps the first time', async () => {
    const res = await s.post(`/api/dashboard/agent-keys/${keyId}/revoke`, {}, owner);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: keyId, revoked_at: expect.any(String) });
    expect((await s.get('/api/agent/v1/programs', bearer(key))).body).toEqual(platform(401, 'UnauthorizedError', ERRORS.agentKeyInvalid.message));
    const again = await s.post(`/api/dashboard/agent-keys/${keyId}/revoke`, {}, owner);
    expect(again.body.data.revoked_at).toBe(res.body.data.revoked_at);
    expect((await s.get('/api/dashboard/workspaces/1/agent-keys', owner)).body.data.find((k: { id: number }) => k.id === keyId).revoked_at).toBe(res.body.data.revoked_at);
  });
});
