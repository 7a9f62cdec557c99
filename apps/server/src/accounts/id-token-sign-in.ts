/**
 * Every place an id_token is accepted (the dashboard session, the CLI login callback, the code
 * flow's callback) goes through here: verify it, check the nonce when the sign-in sent one, find or
 * bind the account (accounts/sign-in.ts), refuse a suspended one. The caller then spends the token
 * (auth/id-token-use.ts) in the transaction that creates what it signs in to, so a token that failed
 * to sign in is not burnt and one that succeeded cannot sign in again. `withRefusalLog` writes the
 * one log line of every refusal.
 */
import { ERRORS } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import type { VerifiedIdToken } from '../auth/id-token.js';
import { checkNonce } from '../auth/nonce.js';
import { signIn, type SignedInAccount } from './sign-in.js';
import { logRefusal, REFUSAL_ERRORS, SignInRefused } from './sign-in-refusal.js';

export interface IdTokenSignIn {
  account: SignedInAccount;
  token: VerifiedIdToken;
}

export async function accountFromIdToken(
  deps: Pick<AppDeps, 'db' | 'identity' | 'now'>,
  idToken: string | undefined,
  sent: { nonce?: string; requestId?: string } = {},
): Promise<IdTokenSignIn> {
  if (!idToken) fail(ERRORS.idTokenRequired);
  const check = await deps.identity.verify(idToken);
  if (!check.ok) {
    if (check.reason === 'provider_unreachable') throw new SignInRefused(ERRORS.identityProviderUnavailable, check.reason, check.detail, {}, { request_id: sent.requestId ?? '' });
    throw new SignInRefused(REFUSAL_ERRORS[check.reason] ?? ERRORS.idTokenInvalid, check.reason, check.detail);
  }
  checkNonce(sent.nonce, check.token.nonce);
  return { account: await signIn(deps.db, check.token.identity, deps.now()), token: check.token };
}

/** Runs a sign-in step; a refusal is logged with its reason and the request id, then passed on. */
export async function withRefusalLog<T>(deps: Pick<AppDeps, 'logger'>, requestId: string | undefined, where: 'dashboard' | 'cli' | 'api', work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof SignInRefused) logRefusal(deps.logger, requestId, where, err.reason, err.detail);
    throw err;
  }
}
