/**
 * An id_token signs in once. The sign-in step records it in `used_id_tokens` in the same
 * transaction as the session it creates; the primary key (issuer and `jti`, else the hash of the
 * token's signed part: id-token.ts `idTokenUseKey`) makes a second use a unique violation, on every
 * process at once. The row is kept until the token's own `exp` (after which the token no longer
 * verifies anyway), then pruned (jobs/prune-expired.ts).
 */
import type { Knex } from 'knex';
import { ERRORS } from '@reftrack/contract';
import { SignInRefused } from '../accounts/sign-in-refusal.js';
import { isUniqueViolation } from '../db/knex.js';
import type { VerifiedIdToken } from './id-token.js';

export async function spendIdToken(trx: Knex, token: VerifiedIdToken, now: number): Promise<void> {
  try {
    await trx('used_id_tokens').insert({ use_key: token.useKey, used_at: now, expires_at: token.expiresAt });
  } catch (err) {
    if (isUniqueViolation(err)) throw new SignInRefused(ERRORS.idTokenReplayed, 'replayed', `id_token ${token.useKey.slice(0, 12)}… was already used to sign in`);
    throw err;
  }
}
