/**
 * OpenID Connect `nonce` (OIDC Core 3.1.2.1, 3.2.2.11): a sign-in that sends one accepts only an
 * id_token carrying the same value, so a token issued for another sign-in — a leaked one, or one
 * meant for the dashboard — cannot complete this one. The CLI login sends
 * `base64url(sha256(state))`: the state is the login session's secret, so the nonce names the
 * session without being stored. A later flow with a stored, random nonce uses the same check.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ERRORS } from '@reftrack/contract';
import { SignInRefused } from '../accounts/sign-in-refusal.js';

/** The nonce the CLI login page sends to the identity provider for the login session of `state`. */
export function cliLoginNonce(state: string): string {
  return createHash('sha256').update(state).digest('base64url');
}

/**
 * The one nonce check: with `expected` set (the sign-in sent a nonce), the token's `nonce` claim
 * must be present and equal; a sign-in that sent none passes `undefined`.
 */
export function checkNonce(expected: string | undefined, claim: string | null): void {
  if (expected === undefined) return;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(claim ?? '', 'utf8');
  if (claim === null || a.length !== b.length || !timingSafeEqual(a, b)) throw new SignInRefused(ERRORS.idTokenNonceMismatch, 'nonce', claim === null ? 'the id_token has no nonce claim' : 'the id_token nonce differs from the one this sign-in sent');
}
