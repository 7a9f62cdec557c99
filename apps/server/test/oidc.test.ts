/** Sign-in against a real OpenID Connect issuer: a local HTTP server publishing discovery and JWKS. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
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
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
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
  new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setAudience(audience).setSubject('sub-1').setIssuedAt().setExpirationTime('5m').sign(privateKey);

describe(`[${dbKind}] OpenID Connect sign-in`, () => {
  it('accepts an id_token signed by the issuer for the audience', async () => {
    const res = await s.post('/api/dashboard/session', { id_token: await token({ email: 'Oidc@Corp.test', email_verified: true, name: 'Olga' }) });
    expect(res.status).toBe(200);
    expect(res.body.data.account).toMatchObject({ email: 'oidc@corp.test', name: 'Olga' });
  });

  it('refuses another audience, another issuer, or an unverified e-mail', async () => {
    for (const t of [await token({ email: 'a@corp.test' }, 'someone-else'), await token({ email: 'a@corp.test' }, 'reftrack-test', 'https://evil.test'), await token({ email: 'a@corp.test', email_verified: false })]) {
      const res = await s.post('/api/dashboard/session', { id_token: t });
      expect(res.status).toBe(401);
      expect(res.body.error.message).toBe('Invalid or expired id_token');
    }
  });

  it('turns the development identity provider off', async () => {
    expect((await s.get('/dev-idp/sign-in')).status).toBe(404);
    expect((await s.post('/dev-idp/token', { email: 'a@b.test' })).status).toBe(404);
  });
});
