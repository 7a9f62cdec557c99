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
import { sha256Hex } from './secret-hash.js';

export interface Identity {
  email: string;
  name: string | null;
  subject: string;
}

/** A verified id_token: who it names, and what the sign-in step checks before accepting it once. */
export interface VerifiedIdToken {
  identity: Identity;
  /** The `nonce` claim, for a sign-in that sent one (auth/nonce.ts); null when absent. */
  nonce: string | null;
  /** What makes the token single-use (auth/id-token-use.ts): the issuer and `jti`, else the whole token. */
  useKey: string;
  /** The token's `exp` in epoch milliseconds: it is remembered as used until then. */
  expiresAt: number;
}

export interface IdentityProvider {
  kind: 'oidc' | 'development';
  verify(idToken: string): Promise<VerifiedIdToken | undefined>;
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
    // Each token is single-use by its jti; two tokens for one e-mail in the same second must differ.
    .setJti(randomBytes(16).toString('base64url'))
    .sign(await devSecret(db));
}

/**
 * The key a token is remembered by once used: its issuer and `jti` when it has one, else the
 * SHA-256 of its signed part (header and payload). Not of the whole token: an ECDSA signature can
 * be rewritten into another valid one, which would make the same token look new.
 */
export function idTokenUseKey(payload: JWTPayload, idToken: string): string {
  if (typeof payload.jti === 'string' && payload.jti !== '') return sha256Hex(`jti\n${payload.iss ?? ''}\n${payload.jti}`);
  return sha256Hex(`token\n${idToken.split('.', 2).join('.')}`);
}

function verified(payload: JWTPayload, idToken: string): VerifiedIdToken | undefined {
  const email = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : '';
  // An unverified address could be anyone's; only a verified one names an account.
  if (!email || payload.email_verified === false || !/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 320) return undefined;
  // Without `exp` a token would be valid forever and its single use could never be forgotten (OIDC Core 2 requires it).
  if (typeof payload.exp !== 'number') return undefined;
  return {
    identity: { email, name: typeof payload.name === 'string' ? payload.name.slice(0, 200) : null, subject: String(payload.sub ?? email) },
    nonce: typeof payload.nonce === 'string' ? payload.nonce : null,
    useKey: idTokenUseKey(payload, idToken),
    expiresAt: payload.exp * 1000,
  };
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
          return verified(payload, idToken);
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
        return verified(payload, idToken);
      } catch {
        return undefined;
      }
    },
  };
}
