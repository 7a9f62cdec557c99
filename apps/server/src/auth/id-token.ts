/**
 * Sign-in identity: an OpenID Connect `id_token`, verified against the JWKS of OIDC_ISSUER (as its
 * discovery document names them: auth/oidc-client.ts) and the audience (OIDC_AUDIENCE, else the
 * client id); without OIDC_ISSUER, tokens of the built-in development identity provider (HS256 with
 * a secret kept in the database, so `reftrack-server dev-token` in another process signs tokens the
 * running server accepts). A refusal says why (`reason`, `detail`), for the log.
 */
import { randomBytes } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { Knex } from 'knex';
import type { Config } from '../config.js';
import { sha256Hex } from './secret-hash.js';
import { OidcFlowError, type OidcClient } from './oidc-client.js';

/** Who an id_token names: the provider's (issuer, subject) binds the account (accounts/sign-in.ts). */
export interface Identity {
  issuer: string;
  subject: string;
  /** Lower-cased, or null when the token has none. */
  email: string | null;
  /** Only the boolean `true` counts: a missing claim or the string "true" does not. */
  emailVerified: boolean;
  name: string | null;
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

export type IdTokenRefusalReason = 'id_token_invalid' | 'issuer' | 'audience' | 'expired' | 'provider_unreachable';

export type IdTokenCheck = { ok: true; token: VerifiedIdToken } | { ok: false; reason: IdTokenRefusalReason; detail: string };

export interface IdentityProvider {
  kind: 'oidc' | 'development';
  verify(idToken: string): Promise<IdTokenCheck>;
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

function verified(payload: JWTPayload, idToken: string): IdTokenCheck {
  // Without `exp` a token would be valid forever and its single use could never be forgotten (OIDC Core 2 requires it).
  if (typeof payload.exp !== 'number') return { ok: false, reason: 'id_token_invalid', detail: 'the id_token has no exp claim' };
  if (typeof payload.sub !== 'string' || payload.sub === '' || payload.sub.length > 255) return { ok: false, reason: 'id_token_invalid', detail: 'the id_token has no usable sub claim' };
  const raw = typeof payload.email === 'string' ? payload.email.trim().toLowerCase() : '';
  const email = raw && /^[^@\s]+@[^@\s]+$/.test(raw) && raw.length <= 320 ? raw : null;
  return {
    ok: true,
    token: {
      identity: { issuer: String(payload.iss), subject: payload.sub, email, emailVerified: payload.email_verified === true, name: typeof payload.name === 'string' ? payload.name.slice(0, 200) : null },
      nonce: typeof payload.nonce === 'string' ? payload.nonce : null,
      useKey: idTokenUseKey(payload, idToken),
      expiresAt: payload.exp * 1000,
    },
  };
}

/** jose's refusal, as a reason an operator can act on. */
function refusal(err: unknown): IdTokenCheck {
  if (err instanceof OidcFlowError) return { ok: false, reason: 'provider_unreachable', detail: err.detail };
  if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired', detail: err.message };
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    const got = err.payload[err.claim];
    if (err.claim === 'iss') return { ok: false, reason: 'issuer', detail: `${err.message}: the token says "${String(got)}"` };
    if (err.claim === 'aud') return { ok: false, reason: 'audience', detail: `${err.message}: the token says ${JSON.stringify(got)}` };
    return { ok: false, reason: 'id_token_invalid', detail: `${err.message} (${err.claim})` };
  }
  return { ok: false, reason: 'id_token_invalid', detail: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
}

export function createIdentityProvider(config: Config, db: Knex, oidcClient?: OidcClient): IdentityProvider {
  if (config.oidcIssuer && oidcClient) {
    let jwks: { uri: string; set: ReturnType<typeof createRemoteJWKSet> } | undefined;
    return {
      kind: 'oidc',
      async verify(idToken) {
        try {
          // The issuer the discovery document names (discovery already checked it equals OIDC_ISSUER).
          const metadata = (await oidcClient.configuration()).serverMetadata();
          if (!metadata.jwks_uri) throw new OidcFlowError('provider_unreachable', 'the discovery document has no jwks_uri');
          if (jwks?.uri !== metadata.jwks_uri) jwks = { uri: metadata.jwks_uri, set: createRemoteJWKSet(new URL(metadata.jwks_uri)) };
          const { payload } = await jwtVerify(idToken, jwks.set, { issuer: metadata.issuer, audience: config.oidcAudience });
          return verified(payload, idToken);
        } catch (err) {
          return refusal(err);
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
      } catch (err) {
        return refusal(err);
      }
    },
  };
}
