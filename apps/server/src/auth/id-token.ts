/**
 * Sign-in identity: an OpenID Connect `id_token`, verified against OIDC_ISSUER's JWKS and
 * OIDC_AUDIENCE; without OIDC_ISSUER, tokens of the built-in development identity provider
 * (HS256 with a secret kept in the database, so `reftrack-server dev-token` in another process
 * signs tokens the running server accepts).
 */
import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { Knex } from 'knex';
import type { Config } from '../config.js';

export interface Identity {
  email: string;
  name: string | null;
  subject: string;
}

export interface IdentityProvider {
  kind: 'oidc' | 'development';
  verify(idToken: string): Promise<Identity | undefined>;
}

export const DEV_AUDIENCE = 'reftrack';
const DEV_TOKEN_MINUTES = 10;
// Fixed, so that a token printed by `reftrack-server dev-token` is accepted whatever PUBLIC_BASE_URL each process has.
const DEV_ISSUER = 'urn:reftrack:dev-idp';

async function devSecret(db: Knex): Promise<Uint8Array> {
  await db('server_settings')
    .insert({ name: 'dev_idp_secret', value: randomBytes(32).toString('base64'), created_at: Date.now() })
    .onConflict('name')
    .ignore();
  const row = await db('server_settings').where({ name: 'dev_idp_secret' }).first('value');
  return Buffer.from(row.value, 'base64');
}

export async function signDevToken(db: Knex, email: string, name?: string): Promise<string> {
  return new SignJWT({ email: email.toLowerCase(), email_verified: true, ...(name ? { name } : {}) })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(DEV_ISSUER)
    .setAudience(DEV_AUDIENCE)
    .setSubject(email.toLowerCase())
    .setIssuedAt()
    .setExpirationTime(`${DEV_TOKEN_MINUTES}m`)
    .sign(await devSecret(db));
}

function identityOf(payload: JWTPayload): Identity | undefined {
  const email = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : '';
  // An unverified address could be anyone's; only a verified one names an account.
  if (!email || payload.email_verified === false || !/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 320) return undefined;
  return { email, name: typeof payload.name === 'string' ? payload.name.slice(0, 200) : null, subject: String(payload.sub ?? email) };
}

export function createIdentityProvider(config: Config, db: Knex): IdentityProvider {
  if (config.oidcIssuer) {
    const issuer = config.oidcIssuer.replace(/\/+$/, '');
    let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
    const keySet = async () => {
      if (jwks) return jwks;
      const res = await fetch(`${issuer}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
      const discovery = (await res.json()) as { jwks_uri?: string };
      if (!discovery.jwks_uri) throw new Error('OIDC discovery document has no jwks_uri');
      jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
      return jwks;
    };
    return {
      kind: 'oidc',
      async verify(idToken) {
        try {
          const { payload } = await jwtVerify(idToken, await keySet(), { issuer: config.oidcIssuer, audience: config.oidcAudience });
          return identityOf(payload);
        } catch {
          return undefined;
        }
      },
    };
  }
  return {
    kind: 'development',
    async verify(idToken) {
      try {
        const { payload } = await jwtVerify(idToken, await devSecret(db), { issuer: DEV_ISSUER, audience: DEV_AUDIENCE, algorithms: ['HS256'] });
        return identityOf(payload);
      } catch {
        return undefined;
      }
    },
  };
}
