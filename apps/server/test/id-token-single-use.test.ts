/**
 * One leaked id_token is not a skeleton key (hardening issue, item 11): every place that accepts an
 * id_token (the dashboard session, the CLI login callback) accepts each token for one sign-in only.
 * The nonce of the CLI login under OpenID Connect is in oidc.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { ERRORS } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture } from './helpers/accounts.js';
import { signDevToken } from '../src/auth/id-token.js';
import { setSuspended } from '../src/ops/accounts.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
});
afterAll(() => s?.close());

const replayed = { data: null, error: { status: 401, name: 'UnauthorizedError', message: ERRORS.idTokenReplayed.message, details: {} } };
const count = async (table: string) => Number((await s.db(table).count({ n: '*' }).first())!.n);

async function cliStart(): Promise<string> {
  const res = await s.post('/api/v1/cli/auth/start', {});
  expect(res.status).toBe(200);
  return res.body.data.state;
}

describe(`[${dbKind}] an id_token is accepted for one sign-in only`, () => {
  it('the same id_token twice on POST /api/dashboard/session: the second is refused and opens no session', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    expect((await s.post('/api/dashboard/session', { id_token: idToken })).status).toBe(200);
    const sessions = await count('dashboard_sessions');
    const again = await s.post('/api/dashboard/session', { id_token: idToken });
    expect(again.body).toEqual(replayed);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect(await count('dashboard_sessions')).toBe(sessions);
  });

  it('the same id_token sent six times at once signs in exactly once', async () => {
    const idToken = await signDevToken(s.db, 'member@acme.test');
    const answers = await Promise.all(Array.from({ length: 6 }, () => s.post('/api/dashboard/session', { id_token: idToken })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 401 && a.body.error.message === ERRORS.idTokenReplayed.message)).toHaveLength(5);
  });

  it('a token that opened a dashboard session cannot complete a CLI login', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    expect((await s.post('/api/dashboard/session', { id_token: idToken })).status).toBe(200);
    const state = await cliStart();
    expect((await s.post('/api/v1/cli/auth/callback', { state, id_token: idToken })).body).toEqual(replayed);
    expect((await s.get(`/api/v1/cli/auth/poll?state=${state}`)).body.data.status).toBe('pending');
  });

  it('a token that completed a CLI login cannot complete another one, nor open a dashboard session', async () => {
    const idToken = await signDevToken(s.db, 'owner@acme.test');
    const first = await cliStart();
    expect((await s.post('/api/v1/cli/auth/callback', { state: first, id_token: idToken })).status).toBe(200);
    const second = await cliStart();
    expect((await s.post('/api/v1/cli/auth/callback', { state: second, id_token: idToken })).body).toEqual(replayed);
    expect((await s.get(`/api/v1/cli/auth/poll?state=${second}`)).body.data.status).toBe('pending');
    expect((await s.post('/api/dashboard/session', { id_token: idToken })).body).toEqual(replayed);
  });

  it('a token refused at sign-in (suspended account) was not used: it signs in once the account is restored', async () => {
    const idToken = await signDevToken(s.db, 'restricted@acme.test');
    await setSuspended(s.db, 'restricted@acme.test', true);
    try {
      expect((await s.post('/api/dashboard/session', { id_token: idToken })).status).toBe(403);
    } finally {
      await setSuspended(s.db, 'restricted@acme.test', false);
    }
    expect((await s.post('/api/dashboard/session', { id_token: idToken })).status).toBe(200);
  });

  it('is remembered until the token’s own expiry, by a key that is neither the token nor its jti in clear', async () => {
    await s.db('used_id_tokens').delete();
    const idToken = await signDevToken(s.db, 'outsider@else.test');
    expect((await s.post('/api/dashboard/session', { id_token: idToken })).status).toBe(200);
    const claims = decodeJwt(idToken);
    const rows = await s.db('used_id_tokens').select();
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].expires_at)).toBe(claims.exp! * 1000);
    expect(rows[0].use_key).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(claims.jti!);
    expect(JSON.stringify(rows)).not.toContain(idToken.split('.')[1]);
  });

  it('development tokens carry a random jti: two signed in the same second are two tokens', async () => {
    const [a, b] = await Promise.all([signDevToken(s.db, 'owner@acme.test'), signDevToken(s.db, 'owner@acme.test')]);
    expect(a).not.toBe(b);
    expect(decodeJwt(a).jti).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect((await s.post('/api/dashboard/session', { id_token: a })).status).toBe(200);
    expect((await s.post('/api/dashboard/session', { id_token: b })).status).toBe(200);
  });
});
