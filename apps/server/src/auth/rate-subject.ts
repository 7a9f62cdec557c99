/**
 * Part 8 counts some limits "per API key". A key counts as such only once it has verified: the
 * subject a point is charged to is the stored credential's id, looked up here before the point is
 * spent (nothing is recorded by the lookup, so 8 rule 2 — refused before the endpoint runs —
 * holds). A token that matches nothing has no subject, and its request counts per client address
 * (docs/security.md, "Rate limits").
 */
import type { Context } from 'koa';
import type { Db } from '../db/knex.js';
import type { RateSubject } from '../http/rate-limit.js';
import { bearerToken } from './bearer.js';
import { findProgramKey } from './program-key.js';
import { sha256Hex } from './secret-hash.js';

/** The credential a route's Bearer token is meant to be. */
export type CredentialKind = 'programKey' | 'loginToken' | 'agentKey';

async function programKeySubject(db: Db, token: string): Promise<string | undefined> {
  const key = await findProgramKey(db, token);
  return key ? `pk:${key.keyId}` : undefined;
}

async function loginTokenSubject(db: Db, token: string, now: number): Promise<string | undefined> {
  // A revoked token no longer counts as verified: its requests count per client address.
  const row = await db('cli_tokens').where({ token_hash: sha256Hex(token) }).whereNull('revoked_at').first('id', 'expires_at');
  return row && Number(row.expires_at) > now ? `lt:${row.id}` : undefined;
}

async function agentKeySubject(db: Db, token: string): Promise<string | undefined> {
  const row = await db('agent_keys').where({ key_hash: sha256Hex(token) }).whereNull('revoked_at').first('id');
  return row ? `ag:${row.id}` : undefined;
}

/** The rate subject of a route whose Bearer token is a `kind` credential. */
export function verifiedCredential(db: Db, kind: CredentialKind, now: () => number): RateSubject {
  return async (ctx: Context) => {
    const token = bearerToken(ctx.get('authorization'));
    if (!token || token.length > 512) return undefined;
    if (kind === 'programKey') return programKeySubject(db, token);
    if (kind === 'loginToken') return loginTokenSubject(db, token, now());
    return agentKeySubject(db, token);
  };
}
