import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { signDevToken } from '../src/auth/id-token.js';
import { setSuspended } from '../src/ops/accounts.js';
import { SignJWT } from 'jose';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
});
afterAll(() => s?.close());

describe(`[${dbKind}] sign-in and dashboard sessions`, () => {
  it('sets an httpOnly, SameSite=Lax session cookie (no Secure on plain HTTP) and stores the token hashed', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    const res = await s.post('/api/dashboard/session', { id_token: idToken });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^reftrack_session=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).not.toContain('Secure');
    expect(res.body.data.account.email).toBe('owner@acme.test');
    expect(res.body.data.workspaces).toEqual([{ id: 1, name: 'Acme', role: 'owner' }]);
    const token = cookie.split(';')[0].split('=')[1];
    expect(JSON.stringify(await s.db('dashboard_sessions').select())).not.toContain(token);
  });

  it('marks the cookie Secure when the public address is HTTPS', async () => {
    // An https public address makes the server "exposed": the development sign-in needs the opt-in,
    // and the test reaches it by address, so that name is allowed too.
    const secure = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://app.reftrack.test', ALLOW_DEV_SIGN_IN: 'true', ALLOWED_HOSTS: '127.0.0.1' } });
    try {
      const idToken = await signDevToken(secure.db, 'owner@acme.test');
      const res = await secure.post('/api/dashboard/session', { id_token: idToken });
      expect(res.headers.get('set-cookie')).toContain('Secure');
    } finally {
      await secure.close();
    }
  });

  it('first sign-in of a new e-mail creates its account and a workspace it owns', async () => {
    const cookie = await signInAs(s, 'Newcomer@Fresh.test');
    const me = await s.get('/api/dashboard/session', cookie);
    expect(me.body.data.account.email).toBe('newcomer@fresh.test');
    expect(me.body.data.workspaces).toHaveLength(1);
    expect(me.body.data.workspaces[0].role).toBe('owner');
    const again = await signInAs(s, 'newcomer@fresh.test');
    expect((await s.get('/api/dashboard/session', again)).body.data.workspaces).toHaveLength(1);
  });

  it('refuses a missing, forged or expired id_token', async () => {
    expect((await s.post('/api/dashboard/session', {})).body.error.message).toBe('id_token is required');
    const forged = await new SignJWT({ email: 'owner@acme.test' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('x').setAudience('reftrack').setExpirationTime('5m').sign(new TextEncoder().encode('not-the-secret-not-the-secret-00'));
    const res = await s.post('/api/dashboard/session', { id_token: forged });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ data: null, error: { status: 401, name: 'UnauthorizedError', message: 'Invalid or expired id_token', details: {} } });
  });

  it('DELETE ends the session', async () => {
    const cookie = await signInAs(s, 'member@acme.test');
    expect((await s.get('/api/dashboard/session', cookie)).status).toBe(200);
    const out = await s.raw('/api/dashboard/session', { method: 'DELETE', headers: { ...cookie, 'content-type': 'application/json' } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toContain('Expires=Thu, 01 Jan 1970');
    expect((await s.get('/api/dashboard/session', cookie)).status).toBe(401);
  });

  it('an expired session stops working', async () => {
    const cookie = await signInAs(s, 'member@acme.test');
    s.clock.offsetMs = 15 * 86_400_000;
    try {
      expect((await s.get('/api/dashboard/programs', cookie)).status).toBe(401);
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('refuses cross-site mutating requests', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const res = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { ...cookie, 'content-type': 'application/json', origin: 'https://evil.test' }, body: JSON.stringify({ name: 'pwned' }) });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('Cross-site request refused');
    const viaFetchMetadata = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { ...cookie, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }, body: JSON.stringify({ name: 'pwned' }) });
    expect(viaFetchMetadata.status).toBe(403);
    const sameOrigin = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { ...cookie, 'content-type': 'application/json', origin: s.url }, body: JSON.stringify({ name: 'Acme' }) });
    expect(sameOrigin.status).toBe(200);
  });

  it('never accepts a program key', async () => {
    const res = await s.get('/api/dashboard/programs', bearer(KEY1));
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('A program key is not accepted here; sign in to the dashboard');
  });

  it('a suspended account cannot sign in and its live sessions stop working', async () => {
    const cookie = await signInAs(s, 'restricted@acme.test');
    await setSuspended(s.db, 'restricted@acme.test', true);
    try {
      const live = await s.get('/api/dashboard/programs', cookie);
      expect(live.status).toBe(403);
      expect(live.body.error).toEqual({ status: 403, name: 'ForbiddenError', message: 'Your account has been suspended.', details: { code: 'ACCOUNT_BLOCKED' } });
      const idToken = await signDevToken(s.db, 'restricted@acme.test');
      const again = await s.post('/api/dashboard/session', { id_token: idToken });
      expect(again.status).toBe(403);
      expect(again.body.error.details.code).toBe('ACCOUNT_BLOCKED');
    } finally {
      await setSuspended(s.db, 'restricted@acme.test', false);
    }
    expect((await s.get('/api/dashboard/programs', cookie)).status).toBe(200);
  });
});

describe(`[${dbKind}] login CSRF: creating, using and ending a session takes same-origin JSON`, () => {
  const JSON_REQUIRED = { data: null, error: { status: 415, name: 'UnsupportedMediaTypeError', message: 'Content-Type must be application/json', details: {} } };

  it('a cross-site text/plain form cannot sign a visitor in: 415, no cookie, no session', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    const sessions = Number((await s.db('dashboard_sessions').count({ n: '*' }).first())!.n);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await s.raw('/api/dashboard/session', { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify({ id_token: idToken }) });
      expect(res.status, type).toBe(415);
      expect(res.body).toEqual(JSON_REQUIRED);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const noType = await s.raw('/api/dashboard/session', { method: 'POST', body: new Blob([JSON.stringify({ id_token: idToken })]) });
    expect(noType.status).toBe(415);
    expect(Number((await s.db('dashboard_sessions').count({ n: '*' }).first())!.n)).toBe(sessions);
  });

  it('a sign-in from another origin is refused even as JSON', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    for (const headers of [{ origin: 'https://evil.test' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }] as Array<Record<string, string>>) {
      const res = await s.post('/api/dashboard/session', { id_token: idToken }, headers);
      expect(res.status).toBe(403);
      expect(res.body.error.message).toBe('Cross-site request refused');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const sameOrigin = await s.post('/api/dashboard/session', { id_token: idToken }, { origin: s.url, 'sec-fetch-site': 'same-origin' });
    expect(sameOrigin.status).toBe(200);
  });

  it('ending and using a session need JSON too; the session survives a refused request', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const end = await s.raw('/api/dashboard/session', { method: 'DELETE', headers: { ...cookie, 'content-type': 'text/plain' } });
    expect(end.status).toBe(415);
    const use = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { ...cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=pwned' });
    expect(use.status).toBe(415);
    expect((await s.get('/api/dashboard/session', cookie)).status).toBe(200);
    expect((await s.db('programs').where({ id: 1 }).first('name')).name).toBe('Acme');
    const json = await s.raw('/api/dashboard/session', { method: 'DELETE', headers: { ...cookie, 'content-type': 'application/json; charset=utf-8' } });
    expect(json.status).toBe(200);
  });

  it('the development sign-in page’s token call takes same-origin JSON as well', async () => {
    const res = await s.raw('/dev-idp/token', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ email: 'owner@acme.test' }) });
    expect(res.status).toBe(415);
    const cross = await s.post('/dev-idp/token', { email: 'owner@acme.test' }, { origin: 'https://evil.test' });
    expect(cross.status).toBe(403);
  });

  it('the tracker’s calls are unchanged: any origin, as before', async () => {
    const res = await s.post('/api/v1/track/click', { affiliate_url: 'https://acme.test/?aff=pat20' }, { origin: 'https://shop.example' });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
