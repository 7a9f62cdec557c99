/**
 * Completing a CLI login session (spec 4.7): by the pasted-token callback (POST /auth/callback, for
 * scripts) or by the browser leg's code flow (routes/auth/oidc.ts). Either way the id_token signs in
 * once, and the session flips pending → complete in one conditional UPDATE, so concurrent callbacks
 * (also across processes) cannot both win. The pairing code is what the confirmation page and the CLI
 * both show, derived from the session's secret so nothing more is stored.
 */
import { createHash } from 'node:crypto';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import { sha256Hex } from '../auth/secret-hash.js';
import { spendIdToken } from '../auth/id-token-use.js';
import { accountFromIdToken, type IdTokenSignIn } from './id-token-sign-in.js';

/** No 0/O, 1/I/L: the code is read off one screen and compared with another. */
const PAIRING_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';

/** `ABCD-EFGH`: eight symbols of SHA-256("pairing" ‖ state). */
export function pairingCode(state: string): string {
  const digest = createHash('sha256').update(`reftrack-cli-pairing\n${state}`).digest();
  let code = '';
  for (let i = 0; i < 8; i++) code += PAIRING_ALPHABET[digest[i] % PAIRING_ALPHABET.length];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface PendingCliLogin {
  id: number;
  device: string | null;
  startedFrom: string | null;
  createdAt: number;
  expiresAt: number;
}

/** The pending, unexpired login session of `stateHash`, or the spec's 404 / 400. */
export async function pendingCliLogin(deps: Pick<AppDeps, 'db' | 'now'>, stateHash: string): Promise<PendingCliLogin> {
  const session = await deps.db('cli_login_sessions').where({ state_hash: stateHash }).first('id', 'status', 'expires_at', 'created_at', 'device', 'started_from');
  if (!session || session.status !== 'pending') fail(ERRORS.cliCallbackNotFound);
  if (Number(session.expires_at) <= deps.now()) fail(ERRORS.cliCallbackExpired);
  return { id: session.id, device: session.device ?? null, startedFrom: session.started_from ?? null, createdAt: Number(session.created_at), expiresAt: Number(session.expires_at) };
}

export const cliStateHash = (state: string): string => sha256Hex(state);

/** Verifies the id_token (with the nonce the sign-in sent) and completes the session of `stateHash`. */
export async function completeCliLogin(
  deps: Pick<AppDeps, 'db' | 'identity' | 'now' | 'atomic'>,
  stateHash: string,
  idToken: string,
  sent: { nonce?: string; requestId?: string },
): Promise<IdTokenSignIn> {
  const session = await pendingCliLogin(deps, stateHash);
  const signedIn = await accountFromIdToken(deps, idToken, sent);
  const now = deps.now();
  await deps.atomic(async (trx) => {
    await spendIdToken(trx, signedIn.token, now);
    const won = await trx('cli_login_sessions').where({ id: session.id, status: 'pending' }).update({ status: 'complete', account_id: signedIn.account.id, completed_at: now });
    // Another callback completed the session first: the throw rolls back the token's use too.
    if (won === 0) fail(ERRORS.cliCallbackNotFound);
  });
  return signedIn;
}
