import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { signDevToken } from '../src/auth/id-token.js';
import { setSuspended } from '../src/ops/accounts.js';
import { markKeyForRotation } from '../src/ops/program-keys.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
});
afterAll(() => s?.close());

const P = '/api/v1/cli';
const platform = (status: number, name: string, message: string, details: Record<string, unknown> = {}) => ({ data: null, error: { status, name, message, details } });

async function start(): Promise<string> {
  const res = await s.post(`${P}/auth/start`, {});
  expect(res.status).toBe(200);
  return res.body.data.state;
}

async function login(email = 'owner@acme.test'): Promise<string> {
  const state = await start();
  expect((await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, email) })).status).toBe(200);
  const poll = await s.get(`${P}/auth/poll?state=${state}`);
  expect(poll.body.data.status).toBe('complete');
  return poll.body.data.token;
}

describe(`[${dbKind}] 4.7 / 3.4 CLI login session`, () => {
  it('start answers state, login_url, expires_at (5 minutes) and poll_interval_seconds', async () => {
    const res = await s.post(`${P}/auth/start`, {});
    expect(res.body.data).toEqual({ state: expect.any(String), login_url: expect.stringContaining('/cli/login?state='), expires_at: expect.any(String), poll_interval_seconds: expect.any(Number), pairing_code: expect.stringMatching(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/) });
    const ttl = Date.parse(res.body.data.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    // login_url confirms the device and the pairing code first; its Continue link leads to the sign-in.
    const page = await s.raw(new URL(res.body.data.login_url).pathname + new URL(res.body.data.login_url).search, { method: 'GET', redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.text).toContain(res.body.data.pairing_code);
    const href = /href="(\/cli\/login\/continue[^"]+)"/.exec(page.text)![1].replace(/&amp;/g, '&');
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    const next = await s.raw(href, { method: 'GET', redirect: 'manual', headers: { cookie } });
    expect(next.status).toBe(302);
    expect(next.headers.get('location')).toContain('/dev-idp/sign-in?state=');
  });

  it('pending, then complete with the token exactly once, then 400 Session already consumed', async () => {
    const state = await start();
    expect((await s.get(`${P}/auth/poll?state=${state}`)).body.data.status).toBe('pending');
    const cb = await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'owner@acme.test') });
    expect(cb.status).toBe(200);
    const first = await s.get(`${P}/auth/poll?state=${state}`);
    expect(first.body.data).toEqual({ status: 'complete', token: expect.stringMatching(/^rtl_/), account: { email: 'owner@acme.test', name: 'Ada Owner' } });
    const again = await s.get(`${P}/auth/poll?state=${state}`);
    expect(again.status).toBe(400);
    expect(again.body).toEqual(platform(400, 'BadRequestError', 'Session already consumed'));
  });

  it('two concurrent polls: exactly one gets the token', async () => {
    const state = await start();
    await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'owner@acme.test') });
    const polls = await Promise.all(Array.from({ length: 6 }, () => s.get(`${P}/auth/poll?state=${state}`)));
    expect(polls.filter((p) => p.status === 200 && p.body.data.token)).toHaveLength(1);
    expect(polls.filter((p) => p.status === 400)).toHaveLength(5);
  });

  it('after five minutes the poll answers 200 status expired and the callback 400 Session expired', async () => {
    const state = await start();
    s.clock.offsetMs = 5 * 60_000 + 1;
    try {
      const poll = await s.get(`${P}/auth/poll?state=${state}`);
      expect(poll.status).toBe(200);
      expect(poll.body.data).toEqual({ status: 'expired' });
      const cb = await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'owner@acme.test') });
      expect(cb.body).toEqual(platform(400, 'BadRequestError', 'Session expired'));
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('7.6 callback messages', async () => {
    expect((await s.post(`${P}/auth/callback`, { state: 'x' })).body).toEqual(platform(400, 'BadRequestError', 'Missing required fields: state, id_token'));
    expect((await s.post(`${P}/auth/callback`, { state: 'unknown-state-000000', id_token: 'x' })).body).toEqual(platform(404, 'NotFoundError', 'Session not found or already used'));
    const state = await start();
    await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'owner@acme.test') });
    expect((await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'owner@acme.test') })).status).toBe(404);
  });

  it('7.6 a suspended account gets 403 with details.code ACCOUNT_BLOCKED', async () => {
    const state = await start();
    await setSuspended(s.db, 'member@acme.test', true);
    try {
      const res = await s.post(`${P}/auth/callback`, { state, id_token: await signDevToken(s.db, 'member@acme.test') });
      expect(res.body).toEqual(platform(403, 'ForbiddenError', 'Your account has been suspended.', { code: 'ACCOUNT_BLOCKED' }));
    } finally {
      await setSuspended(s.db, 'member@acme.test', false);
    }
  });

  it('7.6 poll messages', async () => {
    expect((await s.get(`${P}/auth/poll`)).body).toEqual(platform(400, 'BadRequestError', 'Missing state parameter'));
    expect((await s.get(`${P}/auth/poll?state=nope`)).body).toEqual(platform(404, 'NotFoundError', 'Session not found'));
  });
});

describe(`[${dbKind}] 4.7 init and programs (login token)`, () => {
  it('init creates a program in the account’s workspace without revealing its key', async () => {
    const token = await login();
    const res = await s.post(`${P}/init`, { name: 'CLI Shop', domain: 'cli.test', commission_type: 'fixed', commission_rate: 12.5 }, bearer(token));
    expect(res.status).toBe(201);
    expect(res.body.data.program).toMatchObject({ name: 'CLI Shop', domain: 'cli.test', commission_type: 'fixed', commission_rate: 12.5, advertiser_id: 1 });
    expect(res.body.data.api_key_instructions).toContain('dashboard');
    // The instructions name what exists: the CLI command, and the dashboard's "Generate key" of a never-shown key.
    const id = res.body.data.program.id;
    expect(res.body.data.api_key_instructions).toContain(`\`reftrack keys generate ${id}\``);
    expect(res.body.data.api_key_instructions).toContain(`/programs/${id}/settings → API key → Generate key`);
    expect(res.body.data.next_steps[0]).toMatch(new RegExp(`^Add the tracker to your site: <script src="http://[^"]+/tracker\\.js" data-reftrack-program-id="${id}" defer></script>$`));
    expect(JSON.stringify(res.body)).not.toMatch(/aff_[0-9A-Za-z]{20,}/);
    const list = await s.get(`${P}/programs`, bearer(token));
    expect(list.body.data.map((p: { name: string }) => p.name)).toContain('CLI Shop');
    expect(list.body.data[0].api_token_masked).toMatch(/^•+\w{4}$/);
  });

  it('7.6 init validation messages', async () => {
    const token = await login();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ name: 'x' }, 400, 'Missing required fields: name, domain, commission_type, commission_rate'],
      [{ name: 'x', domain: 'x.test', commission_type: 'cpa', commission_rate: 5 }, 400, 'Invalid commission_type: cpa. Valid: percent, fixed, recurring_percent, recurring_fixed'],
      [{ name: 'x', domain: 'x.test', commission_type: 'percent', commission_rate: 0 }, 400, 'commission_rate must be a positive number'],
      [{ name: 'x', domain: 'x.test', commission_type: 'percent', commission_rate: 5, advertiser_id: 2 }, 403, 'advertiser_id does not match the authenticated account'],
    ];
    for (const [body, status, message] of cases) {
      const res = await s.post(`${P}/init`, body, bearer(token));
      expect(res.status, message).toBe(status);
      expect(res.body.error.message).toBe(message);
    }
  });

  it('7.6 init 401 and 403 messages', async () => {
    const ok = { name: 'x', domain: 'x.test', commission_type: 'percent', commission_rate: 5 };
    expect((await s.post(`${P}/init`, ok)).body).toEqual(platform(401, 'UnauthorizedError', 'Authentication required — run `reftrack login` first'));
    expect((await s.post(`${P}/init`, ok, bearer('rtl_forged'))).body).toEqual(platform(401, 'UnauthorizedError', 'Invalid or expired token — run `reftrack login` again'));
    const memberToken = await login('member@acme.test');
    expect((await s.post(`${P}/init`, ok, bearer(memberToken))).body).toEqual(platform(403, 'ForbiddenError', 'No advertiser found for this account — run `reftrack login` again'));
    const goneToken = await login('newbie@gone.test');
    await s.db('accounts').where({ email: 'newbie@gone.test' }).delete();
    expect((await s.post(`${P}/init`, ok, bearer(goneToken))).body).toEqual(platform(401, 'UnauthorizedError', 'User not found — run `reftrack login` again'));
    expect((await s.get(`${P}/programs`, bearer(goneToken))).body).toEqual(platform(401, 'UnauthorizedError', 'User not found'));
  });

  it('7.6 programs 401 messages; a program key is no login token', async () => {
    expect((await s.get(`${P}/programs`)).body).toEqual(platform(401, 'UnauthorizedError', 'Missing Authorization header. Run `reftrack login` first.'));
    expect((await s.get(`${P}/programs`, bearer(KEY1))).body).toEqual(platform(401, 'UnauthorizedError', 'Invalid or expired token. Run `reftrack login` to refresh.'));
  });
});

describe(`[${dbKind}] design: POST /api/v1/cli/programs/:id/key (reftrack keys generate)`, () => {
  const keyPath = (id: number) => `${P}/programs/${id}/key`;
  const readinessWith = (key: string) => s.get('/api/v1/programs/me/readiness', bearer(key));

  async function newProgram(token: string): Promise<number> {
    const res = await s.post(`${P}/init`, { name: `Keys ${dbKind}`, domain: 'keys.test', commission_type: 'percent', commission_rate: 10 }, bearer(token));
    expect(res.status, res.text).toBe(201);
    return res.body.data.program.id as number;
  }
  const listed = async (token: string, id: number) => (await s.get(`${P}/programs`, bearer(token))).body.data.find((p: { id: number }) => p.id === id);

  it('a program made by init has a key that was never shown: api_key_revealed_at is null', async () => {
    const token = await login();
    const id = await newProgram(token);
    expect((await listed(token, id)).api_key_revealed_at).toBeNull();
    expect((await s.get(`/api/dashboard/programs/${id}`, await signInAs(s, 'owner@acme.test'))).body.data.api_key_revealed_at).toBeNull();
  });

  it('the owner gets the first key once, without replace; it works at once and the program counts it as shown', async () => {
    const token = await login();
    const id = await newProgram(token);
    const res = await s.post(keyPath(id), {}, bearer(token));
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    const key = res.body.data.api_key as string;
    expect(res.body.data).toEqual({ program_id: id, api_key: expect.stringMatching(/^aff_[A-Za-z0-9]{32,}$/), api_token_masked: `••••••••${key.slice(-4)}`, replaced: false, note: 'Store this key now: it is shown only once.' });
    expect((await readinessWith(key)).status).toBe(200);
    const program = await listed(token, id);
    expect(Date.parse(program.api_key_revealed_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(program.api_token_masked).toBe(`••••••••${key.slice(-4)}`);
  });

  it('a key that was shown is kept unless replace is true (409), and replace: true swaps it with no overlap', async () => {
    const token = await login();
    const id = await newProgram(token);
    const first = (await s.post(keyPath(id), {}, bearer(token))).body.data.api_key as string;
    const kept = await s.post(keyPath(id), { replace: false }, bearer(token));
    expect(kept.status).toBe(409);
    expect(kept.body).toEqual(platform(409, 'ConflictError', "This program's key was already shown once. A new key stops it at once: send replace: true to replace it."));
    expect((await readinessWith(first)).status).toBe(200);

    const replaced = await s.post(keyPath(id), { replace: true }, bearer(token));
    expect(replaced.status, replaced.text).toBe(201);
    expect(replaced.body.data).toMatchObject({ replaced: true, note: 'Store this key now: it is shown only once. The previous key stopped working at this moment.' });
    expect((await readinessWith(first)).status).toBe(401);
    expect((await readinessWith(replaced.body.data.api_key)).status).toBe(200);
  });

  it('two first generations at the same moment: one key is handed out, the other call is refused', async () => {
    const token = await login();
    const id = await newProgram(token);
    const both = await Promise.all([s.post(keyPath(id), {}, bearer(token)), s.post(keyPath(id), {}, bearer(token))]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
    const winner = both.find((r) => r.status === 201)!;
    expect((await readinessWith(winner.body.data.api_key)).status).toBe(200);
  });

  it('refuses exactly like the dashboard route: a member 403, another workspace 404, no login 401; replace must be a boolean', async () => {
    const ownerToken = await login();
    const id = await newProgram(ownerToken);
    const member = await s.post(keyPath(id), { replace: true }, bearer(await login('member@acme.test')));
    const dashboardMember = await s.post(`/api/dashboard/programs/${id}/key`, {}, await signInAs(s, 'member@acme.test'));
    expect(member.status).toBe(403);
    expect(member.body).toEqual(dashboardMember.body);
    expect(member.body).toEqual(platform(403, 'ForbiddenError', 'Only a workspace owner can generate or regenerate the program key'));
    const outsider = await s.post(keyPath(id), { replace: true }, bearer(await login('outsider@else.test')));
    expect(outsider.body).toEqual(platform(404, 'NotFoundError', 'Program not found'));
    expect((await s.post(keyPath(99_999), {}, bearer(ownerToken))).body).toEqual(platform(404, 'NotFoundError', 'Program not found'));
    expect((await s.post(keyPath(id), {})).body).toEqual(platform(401, 'UnauthorizedError', 'Missing Authorization header. Run `reftrack login` first.'));
    expect((await s.post(keyPath(id), {}, bearer(KEY1))).body).toEqual(platform(401, 'UnauthorizedError', 'Invalid or expired token. Run `reftrack login` to refresh.'));
    expect((await s.post(keyPath(id), { replace: 'yes' }, bearer(ownerToken))).body).toEqual(platform(400, 'BadRequestError', 'replace must be true or false'));
    // None of the refusals issued a key.
    expect((await listed(ownerToken, id)).api_key_revealed_at).toBeNull();
  });

  it('the dashboard route marks its key shown too, and says whether a shown key was replaced', async () => {
    const token = await login();
    const id = await newProgram(token);
    const cookie = await signInAs(s, 'owner@acme.test');
    const first = await s.post(`/api/dashboard/programs/${id}/key`, {}, cookie);
    expect(first.body.data.note).toBe('Store this key now: it is shown only once.');
    expect((await listed(token, id)).api_key_revealed_at).not.toBeNull();
    const second = await s.post(`/api/dashboard/programs/${id}/key`, {}, cookie);
    expect(second.body.data.note).toBe('Store this key now: it is shown only once. The previous key stopped working at this moment.');
  });
});

describe(`[${dbKind}] 4.7 status and test events (program key)`, () => {
  it('status: the program, its key state and readiness; no X-Request-ID on 200 and 401', async () => {
    const res = await s.get(`${P}/status`, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body.data.program).toMatchObject({ id: 1, name: 'Acme' });
    expect(res.body.data.key).toEqual({ state: 'active', rotate_by: null });
    expect(res.body.data.readiness.checklist).toHaveLength(6);
    expect(res.headers.get('x-request-id')).toBeNull();
    const denied = await s.get(`${P}/status`, bearer('aff_wrong'));
    expect(denied.status).toBe(401);
    expect(denied.headers.get('x-request-id')).toBeNull();
  });

  it('7.6 status / test-event 401 messages', async () => {
    for (const path of ['/status', '/test-event']) {
      const call = (h: Record<string, string>) => (path === '/status' ? s.get(P + path, h) : s.post(P + path, { event_type: 'click' }, h));
      expect((await call({})).body.error.message).toBe('Missing or malformed Authorization header. Expected: Bearer <api_token>');
      expect((await call({ authorization: 'Bearer ' })).body.error.message).toBe('Missing API token');
      const invalid = (await call(bearer('aff_wrong'))).body.error.message;
      expect(invalid).toMatch(/^Invalid API key\. /);
      expect(invalid).toContain('regenerate');
    }
  });

  it('status reports a key marked for rotation; a retired key answers the typed 401', async () => {
    const deadline = Date.now() + 86_400_000;
    await markKeyForRotation(s.db, 2, deadline);
    const res = await s.get(`${P}/status`, bearer(KEY2));
    expect(res.body.data.key).toEqual({ state: 'marked', rotate_by: new Date(deadline).toISOString() });
    expect(res.body.warnings).toHaveLength(1);
    s.clock.offsetMs = 86_400_000 + 1000;
    try {
      const retired = await s.post(`${P}/test-event`, { event_type: 'click' }, bearer(KEY2));
      expect(retired.status).toBe(401);
      expect(retired.body.error.code).toBe('api_key_rotation_required');
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('test-event click, lead and sale record one test event each, invisible to metrics and commissions', async () => {
    const metrics = await s.db('partner_programs').where({ program_id: 1 }).sum({ c: 'clicks', l: 'leads', s: 'sales' }).first();
    const commissions = Number((await s.db('commissions').count({ n: '*' }).first())!.n);
    for (const type of ['click', 'lead', 'sale']) {
      const res = await s.post(`${P}/test-event`, { event_type: type }, bearer(KEY1));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ event_type: type, event_id: expect.any(Number), test_mode: true });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
    expect(await s.db('partner_programs').where({ program_id: 1 }).sum({ c: 'clicks', l: 'leads', s: 'sales' }).first()).toEqual(metrics);
    expect(Number((await s.db('commissions').count({ n: '*' }).first())!.n)).toBe(commissions);
  });

  it('7.6 400 Invalid event_type', async () => {
    const res = await s.post(`${P}/test-event`, { event_type: 'refund' }, bearer(KEY1));
    expect(res.body).toEqual(platform(400, 'BadRequestError', 'Invalid event_type: refund. Valid: click, lead, sale'));
  });

  // Chains count per clock hour: run these tests one minute into a fresh hour so none straddles a boundary.
  const HOUR = 3_600_000;
  const intoNextHour = () => Math.ceil(Date.now() / HOUR) * HOUR + 60_000 - Date.now();

  it('a chain runs click → lead → sale on test-flagged records and reports each step', async () => {
    s.clock.offsetMs = intoNextHour();
    const commissions = Number((await s.db('commissions').count({ n: '*' }).first())!.n);
    const res = await s.post(`${P}/test-event`, { type: 'chain' }, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ chain_id: expect.any(String), passed: true, chains_remaining_this_hour: 9 });
    expect(res.body.data.steps.map((x: { step: string; ok: boolean; status: number }) => [x.step, x.ok, x.status])).toEqual([['click', true, 200], ['lead', true, 200], ['sale', true, 200]]);
    const clickId = res.body.data.steps[0].detail.click_id;
    expect((await s.db('customers').where({ click_id: clickId }).first()).is_test).toBeTruthy();
    expect(Number((await s.db('commissions').count({ n: '*' }).first())!.n)).toBe(commissions);
    const owner = await import('./helpers/accounts.js').then((m) => m.signInAs(s, 'owner@acme.test'));
    const listing = await s.get('/api/tracking/events/1?pageSize=100', owner);
    expect(JSON.stringify(listing.body)).not.toContain(clickId);
    const links = await s.get('/api/dashboard/programs/1/links', owner);
    expect(JSON.stringify(links.body)).not.toContain('reftrack-test');
    s.clock.offsetMs = 0;
  });

  it('at most 10 chains per program per hour: the 11th answers 429 typed rate_limited, and writes nothing', async () => {
    const offset = intoNextHour();
    s.clock.offsetMs = offset;
    for (let i = 0; i < 9; i++) expect((await s.post(`${P}/test-event`, { type: 'chain' }, bearer(KEY1))).status).toBe(200);
    const customers = Number((await s.db('customers').count({ n: '*' }).first())!.n);
    const res = await s.post(`${P}/test-event`, { type: 'chain' }, bearer(KEY1));
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: { status: 429, code: 'rate_limited', message: 'Too many synthetic chains (max 10/program/hour).', retry_after_seconds: expect.any(Number) } });
    expect(Number(res.headers.get('retry-after'))).toBe(res.body.error.retry_after_seconds);
    expect(Number((await s.db('customers').count({ n: '*' }).first())!.n)).toBe(customers);
    s.clock.offsetMs = offset + HOUR;
    try {
      expect((await s.post(`${P}/test-event`, { type: 'chain' }, bearer(KEY1))).status).toBe(200);
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('POST /stripe-connect answers 410 with a pointer to the dashboard', async () => {
    const res = await s.post(`${P}/stripe-connect`, {});
    expect(res.status).toBe(410);
    expect(res.body.error.message).toMatch(/^This endpoint is retired\. .*dashboard/);
  });

  it('500s carry the request id in the message and in details.request_id', async () => {
    await s.db.schema.renameTable('cli_login_sessions', 'cli_login_sessions_tmp');
    try {
      const res = await s.post(`${P}/auth/start`, {});
      expect(res.status).toBe(500);
      const id = res.headers.get('x-request-id');
      expect(res.body).toEqual(platform(500, 'InternalServerError', `Failed to start auth session (request_id: ${id})`, { request_id: id }));
    } finally {
      await s.db.schema.renameTable('cli_login_sessions_tmp', 'cli_login_sessions');
    }
  });
});
