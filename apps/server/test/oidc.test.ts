/** Sign-in against a real OpenID Connect issuer: a local HTTP server publishing discovery and JWKS. */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { ERRORS } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

let issuerServer: http.Server;
let issuer: string;
let privateKey: CryptoKey;
let s: TestServer;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  issuerServer = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/authorize` }));
    else if (req.url === '/jwks') res.end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end('{}');
  });
  await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
  issuer = `http://127.0.0.1:${(issuerServer.address() as AddressInfo).port}`;
  s = await startTestServer({ env: { OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'reftrack-test' } });
});
afterAll(async () => {
  await s?.close();
  issuerServer?.close();
});

const token = (claims: Record<string, unknown>, audience = 'reftrack-test', iss = issuer) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setAudience(audience).setSubject(typeof claims.sub === 'string' ? claims.sub : 'sub-1').setIssuedAt().setExpirationTime('5m').sign(privateKey);

describe(`[${dbKind}] OpenID Connect sign-in`, () => {
  it('accepts an id_token signed by the issuer for the audience', async () => {
    const res = await s.post('/api/dashboard/session', { id_token: await token({ email: 'Oidc@Corp.test', email_verified: true, name: 'Olga' }) });
    expect(res.status).toBe(200);
    expect(res.body.data.account).toMatchObject({ email: 'oidc@corp.test', name: 'Olga' });
  });

  it('refuses another audience or another issuer', async () => {
    for (const t of [await token({ email: 'a@corp.test', email_verified: true }, 'someone-else'), await token({ email: 'a@corp.test', email_verified: true }, 'reftrack-test', 'https://evil.test')]) {
      const res = await s.post('/api/dashboard/session', { id_token: t });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe('Invalid or expired id_token');
    }
  });

  it('a first sign-in needs email_verified to be the boolean true (false, absent and "true" are refused)', async () => {
    for (const claims of [{ email_verified: false }, {}, { email_verified: 'true' }]) {
      const res = await s.post('/api/dashboard/session', { id_token: await token({ email: 'owner@acme.test', sub: 'sub-unverified', ...claims }) });
      expect(res.status, JSON.stringify(claims)).toBe(403);
      expect(res.body.error.message).toBe(ERRORS.idTokenEmailUnverified.message);
    }
  });

  it('an identity bound at first sign-in keeps its account when its e-mail changes at the provider', async () => {
    // sub-1 was bound to oidc@corp.test by the first sign-in above; it now claims the owner's address.
    const res = await s.post('/api/dashboard/session', { id_token: await token({ email: 'owner@acme.test', email_verified: true }) });
    expect(res.status).toBe(200);
    expect(res.body.data.account.email).toBe('oidc@corp.test');
  });

  it('turns the development identity provider off', async () => {
    expect((await s.get('/dev-idp/sign-in')).status).toBe(404);
    expect((await s.post('/dev-idp/token', { email: 'a@b.test' })).status).toBe(404);
  });
});

const refused = (message: string) => ({ data: null, error: { status: 401, name: 'UnauthorizedError', message, details: {} } });

/** A CLI login session, and the nonce a script's id_token must carry for it (POST /auth/callback). */
async function cliLogin(): Promise<{ state: string; nonce: string }> {
  const start = await s.post('/api/v1/cli/auth/start', {});
  const state = start.body.data.state as string;
  return { state, nonce: createHash('sha256').update(state).digest('base64url') };
}

describe(`[${dbKind}] OpenID Connect: the CLI login's nonce and single use`, () => {
  it('an id_token carrying that nonce completes the login', async () => {
    const { state, nonce } = await cliLogin();
    const cb = await s.post('/api/v1/cli/auth/callback', { state, id_token: await token({ email: 'cli@corp.test', email_verified: true, nonce }) });
    expect(cb.status, cb.text).toBe(200);
    expect((await s.get(`/api/v1/cli/auth/poll?state=${state}`)).body.data.status).toBe('complete');
  });

  it('an id_token without a nonce, or with another login’s, is refused and the login stays pending', async () => {
    const mine = await cliLogin();
    const other = await cliLogin();
    for (const claims of [{}, { nonce: other.nonce }, { nonce: '' }, { nonce: mine.nonce.slice(0, -1) }]) {
      const cb = await s.post('/api/v1/cli/auth/callback', { state: mine.state, id_token: await token({ email: 'cli@corp.test', email_verified: true, ...claims }) });
      expect(cb.body, JSON.stringify(claims)).toEqual(refused(ERRORS.idTokenNonceMismatch.message));
    }
    expect((await s.get(`/api/v1/cli/auth/poll?state=${mine.state}`)).body.data.status).toBe('pending');
  });

  it('a token issued for the dashboard (no nonce) cannot complete a CLI login; one that completed a CLI login cannot open a dashboard session', async () => {
    const dashboardToken = await token({ email: 'both@corp.test', email_verified: true, jti: 'dash-1' });
    expect((await s.post('/api/dashboard/session', { id_token: dashboardToken })).status).toBe(200);
    const login = await cliLogin();
    expect((await s.post('/api/v1/cli/auth/callback', { state: login.state, id_token: dashboardToken })).body).toEqual(refused(ERRORS.idTokenNonceMismatch.message));
    const cliToken = await token({ email: 'both@corp.test', email_verified: true, nonce: login.nonce });
    expect((await s.post('/api/v1/cli/auth/callback', { state: login.state, id_token: cliToken })).status).toBe(200);
    expect((await s.post('/api/dashboard/session', { id_token: cliToken })).body).toEqual(refused(ERRORS.idTokenReplayed.message));
  });

  it('single use holds by issuer and jti (a re-signed token with the same jti), and by the token itself without a jti', async () => {
    const first = await token({ email: 'jti@corp.test', email_verified: true, jti: 'one-time' });
    expect((await s.post('/api/dashboard/session', { id_token: first })).status).toBe(200);
    const resigned = await token({ email: 'jti@corp.test', email_verified: true, jti: 'one-time', name: 'Other' });
    expect((await s.post('/api/dashboard/session', { id_token: resigned })).body).toEqual(refused(ERRORS.idTokenReplayed.message));
    const noJti = await token({ email: 'nojti@corp.test', email_verified: true });
    expect((await s.post('/api/dashboard/session', { id_token: noJti })).status).toBe(200);
    expect((await s.post('/api/dashboard/session', { id_token: noJti })).body).toEqual(refused(ERRORS.idTokenReplayed.message));
  });

  it('refuses a token without exp (it could never be forgotten as used)', async () => {
    const eternal = await new SignJWT({ email: 'eternal@corp.test', email_verified: true }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(issuer).setAudience('reftrack-test').setSubject('sub-1').setIssuedAt().sign(privateKey);
    expect((await s.post('/api/dashboard/session', { id_token: eternal })).body).toEqual(refused(ERRORS.idTokenInvalid.message));
  });
});
