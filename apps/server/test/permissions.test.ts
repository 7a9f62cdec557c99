/**
 * The permission matrix: every dashboard and agent route, for an owner, a member, a restricted
 * member, a member of another workspace, no session, a program key and an agent key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, OTHER_KEY, signInAs } from './helpers/accounts.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { issueLoginToken } from '../src/auth/login-token.js';
import { sha256Hex } from '../src/auth/secret-hash.js';

type Actor = 'owner' | 'member' | 'restricted' | 'outsider' | 'none' | 'programKey' | 'agentKey';
const ACTORS: Actor[] = ['owner', 'member', 'restricted', 'outsider', 'none', 'programKey', 'agentKey'];

let s: TestServer;
const headers: Record<Actor, Record<string, string>> = {} as never;
let linkId: number;
let agentKeyId: number;
let ownerCliTokenId: number;
let seq = 0;

beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  for (const [actor, email] of [['owner', 'owner@acme.test'], ['member', 'member@acme.test'], ['restricted', 'restricted@acme.test'], ['outsider', 'outsider@else.test']] as const) {
    headers[actor] = await signInAs(s, email);
  }
  headers.none = {};
  headers.programKey = bearer(KEY1);
  headers.agentKey = bearer(await createAgentKey(s.db, 1, ['programs:read', 'programs:write'], 'matrix'));
  linkId = (await s.db('referral_links').where({ short_link: 'sam10' }).first()).id;
  agentKeyId = (await s.db('agent_keys').where({ key_hash: sha256Hex(await createAgentKey(s.db, 1, ['programs:read'], 'to revoke')) }).first('id')).id;
  const ownerId = (await s.db('accounts').where({ email: 'owner@acme.test' }).first('id')).id;
  ownerCliTokenId = (await s.db('cli_tokens').where({ token_hash: sha256Hex(await issueLoginToken(s.db, ownerId, Date.now())) }).first('id')).id;
});
afterAll(() => s?.close());

interface Row {
  name: string;
  method: string;
  path: () => string;
  body?: () => unknown;
  expect: Record<Actor, number>;
}

const denied = { none: 401, programKey: 401, agentKey: 401 };
const rows: Row[] = [
  { name: 'list programs', method: 'GET', path: () => '/api/dashboard/programs', expect: { owner: 200, member: 200, restricted: 200, outsider: 200, ...denied } },
  { name: 'create program', method: 'POST', path: () => '/api/dashboard/programs', body: () => ({ workspace_id: 1, name: 'New', domain: 'new.test', commission_type: 'percent', commission_rate: 5 }), expect: { owner: 201, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'read program', method: 'GET', path: () => '/api/dashboard/programs/1', expect: { owner: 200, member: 200, restricted: 200, outsider: 404, ...denied } },
  { name: 'update program', method: 'PATCH', path: () => '/api/dashboard/programs/1', body: () => ({ attribution_window_days: 45 }), expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'regenerate key', method: 'POST', path: () => '/api/dashboard/programs/3/key', expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'readiness', method: 'GET', path: () => '/api/dashboard/programs/1/readiness', expect: { owner: 200, member: 200, restricted: 200, outsider: 404, ...denied } },
  { name: 'list partners', method: 'GET', path: () => '/api/dashboard/programs/1/partners', expect: { owner: 200, member: 200, restricted: 403, outsider: 404, ...denied } },
  { name: 'add partner', method: 'POST', path: () => '/api/dashboard/programs/1/partners', body: () => ({ name: 'Neo', code: `neo${dbKind}${++seq}` }), expect: { owner: 201, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'list links', method: 'GET', path: () => '/api/dashboard/programs/1/links', expect: { owner: 200, member: 200, restricted: 403, outsider: 404, ...denied } },
  { name: 'create link', method: 'POST', path: () => '/api/dashboard/programs/1/links', body: () => ({ short_link: `l${dbKind}${++seq}`, partner_id: 1 }), expect: { owner: 201, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'switch link', method: 'PATCH', path: () => `/api/dashboard/links/${linkId}`, body: () => ({ active: true }), expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'read payments', method: 'GET', path: () => '/api/dashboard/programs/1/payments', expect: { owner: 200, member: 200, restricted: 200, outsider: 404, ...denied } },
  { name: 'connect payments', method: 'PUT', path: () => '/api/dashboard/programs/1/payments', body: () => ({ stripe_account_id: 'acct_123', webhook_secret: 'whsec_abc' }), expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'event listing', method: 'GET', path: () => '/api/tracking/events/1', expect: { owner: 200, member: 200, restricted: 403, outsider: 404, ...denied } },
  { name: 'list own CLI tokens', method: 'GET', path: () => '/api/dashboard/cli-tokens', expect: { owner: 200, member: 200, restricted: 200, outsider: 200, ...denied } },
  // Each account manages its own CLI tokens: the owner's token is nobody else's to revoke.
  { name: 'revoke a CLI token', method: 'POST', path: () => `/api/dashboard/cli-tokens/${ownerCliTokenId}/revoke`, expect: { owner: 200, member: 404, restricted: 404, outsider: 404, ...denied } },
  { name: 'list agent keys', method: 'GET', path: () => '/api/dashboard/workspaces/1/agent-keys', expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
  { name: 'revoke an agent key', method: 'POST', path: () => `/api/dashboard/agent-keys/${agentKeyId}/revoke`, expect: { owner: 200, member: 403, restricted: 403, outsider: 404, ...denied } },
];

describe(`[${dbKind}] dashboard permission matrix`, () => {
  for (const row of rows) {
    for (const actor of ACTORS) {
      it(`${row.name}: ${actor} → ${row.expect[actor]}`, async () => {
        const init: RequestInit = { method: row.method, headers: { 'content-type': 'application/json', ...headers[actor] } };
        if (row.body) init.body = JSON.stringify(row.body());
        const res = await s.raw(row.path(), init);
        expect(res.status, res.text).toBe(row.expect[actor]);
        if (res.status >= 400) expect(res.body).toMatchObject({ data: null, error: { status: res.status, message: expect.any(String) } });
      });
    }
  }

  it('the program list shows only the caller’s workspaces', async () => {
    const mine = await s.get('/api/dashboard/programs', headers.outsider);
    expect(mine.body.data.map((p: { id: number }) => p.id)).toEqual([4]);
  });

  it('a member is told why a key cannot be regenerated', async () => {
    const res = await s.post('/api/dashboard/programs/1/key', {}, headers.member);
    expect(res.body.error.message).toBe('Only a workspace owner can generate or regenerate the program key');
  });
});

describe(`[${dbKind}] agent API permission matrix`, () => {
  let readOnly: Record<string, string>;
  let writeOnly: Record<string, string>;
  let foreign: Record<string, string>;
  beforeAll(async () => {
    readOnly = bearer(await createAgentKey(s.db, 1, ['programs:read'], null));
    writeOnly = bearer(await createAgentKey(s.db, 1, ['programs:write'], null));
    foreign = bearer(await createAgentKey(s.db, 2, ['programs:read', 'programs:write'], null));
  });

  it('GET /api/agent/v1/programs lists the key’s workspace', async () => {
    const res = await s.get('/api/agent/v1/programs', readOnly);
    expect(res.status).toBe(200);
    const ids = res.body.data.map((p: { id: number }) => p.id);
    expect(ids).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(ids).not.toContain(4);
    expect(res.body.data[0].api_token_masked).toMatch(/^•+\w{4}$/);
    expect(JSON.stringify(res.body)).not.toContain(KEY1);
  });
  it('a key lacking programs:read is refused with 403', async () => {
    const res = await s.get('/api/agent/v1/programs/1', writeOnly);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('This agent key lacks the programs:read scope');
  });
  it('PATCH needs programs:write', async () => {
    expect((await s.raw('/api/agent/v1/programs/1', { method: 'PATCH', headers: { ...readOnly, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x' }) })).status).toBe(403);
    const ok = await s.raw('/api/agent/v1/programs/1', { method: 'PATCH', headers: { ...writeOnly, 'content-type': 'application/json' }, body: JSON.stringify({ lead_auth: 'browser_allowed' }) });
    expect(ok.status).toBe(200);
    expect(ok.body.data.lead_auth).toBe('browser_allowed');
    await s.db('programs').where({ id: 1 }).update({ lead_auth: 'server_required' });
  });
  it('PATCH validates like the dashboard', async () => {
    const res = await s.raw('/api/agent/v1/programs/1', { method: 'PATCH', headers: { ...writeOnly, 'content-type': 'application/json' }, body: JSON.stringify({ commission_type: 'bogus' }) });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Invalid commission_type: bogus. Valid: percent, fixed, recurring_percent, recurring_fixed');
  });
  it('a program of another workspace answers 404', async () => {
    expect((await s.get('/api/agent/v1/programs/1', foreign)).status).toBe(404);
    expect((await s.get('/api/agent/v1/programs/4', foreign)).status).toBe(200);
  });
  it('a program key is refused with 401', async () => {
    for (const key of [KEY1, OTHER_KEY]) {
      const res = await s.get('/api/agent/v1/programs', bearer(key));
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe('A program key cannot be used on agent endpoints; use an agent key (agt_...)');
    }
  });
  it('no key, a malformed header, or an unknown key answer 401', async () => {
    expect((await s.get('/api/agent/v1/programs')).status).toBe(401);
    expect((await s.get('/api/agent/v1/programs', { authorization: 'agt_x' })).status).toBe(401);
    expect((await s.get('/api/agent/v1/programs', bearer('agt_unknown'))).body.error.message).toBe('Invalid agent key');
  });
  it('a dashboard session does not authenticate agent endpoints', async () => {
    expect((await s.get('/api/agent/v1/programs', headers.owner)).status).toBe(401);
  });
  it('the agent key is stored only as a hash', async () => {
    const dump = JSON.stringify(await s.db('agent_keys').select());
    expect(dump).not.toMatch(/agt_[0-9A-Za-z]{20,}/);
  });
});
