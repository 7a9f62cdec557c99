/**
 * Every place an id_token is accepted (the dashboard session, the CLI login callback) goes through
 * here: verify it, check the nonce when the sign-in sent one, refuse a suspended account. The caller
 * then spends the token (auth/id-token-use.ts) in the transaction that creates what it signs in to,
 * so a token that failed to sign in is not burnt and one that succeeded cannot sign in again.
 */
import { ERRORS } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import type { VerifiedIdToken } from '../auth/id-token.js';
import { checkNonce } from '../auth/nonce.js';
import { signIn, type SignedInAccount } from './sign-in.js';

export interface IdTokenSignIn {
  account: SignedInAccount;
  token: VerifiedIdToken;
}

export async function accountFromIdToken(deps: Pick<AppDeps, 'db' | 'identity' | 'now'>, idToken: string | undefined, sent: { nonce?: string } = {}): Promise<IdTokenSignIn> {
  if (!idToken) fail(ERRORS.idTokenRequired);
  const token = await deps.identity.verify(idToken);
  if (!token) fail(ERRORS.idTokenInvalid);
  checkNonce(sent.nonce, token.nonce);
  return { account: await signIn(deps.db, token.identity, deps.now()), token };
}
