/**
 * The CLI login session (3.4, 4.7, 7.6): start → the person signs in on `login_url`, whose page posts
 * the callback → the CLI polls and receives the login token exactly once. Every step is one
 * conditional UPDATE, so concurrent callbacks or polls (also across processes) cannot both win.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ERRORS, LIMITS, type CliAuthPollResponse, type CliAuthStartResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { sha256Hex } from '../../auth/secret-hash.js';
import { issueLoginToken } from '../../auth/login-token.js';
import { accountFromIdToken } from '../../accounts/id-token-sign-in.js';
import { spendIdToken } from '../../auth/id-token-use.js';
import { cliLoginNonce } from '../../auth/nonce.js';

const POLL_INTERVAL_SECONDS = 2;
const SESSION_MS = LIMITS.cliLoginSessionSeconds * 1000;

export function authStart(deps: AppDeps) {
  return async function handleStart(ctx: Context): Promise<void> {
    const state = randomBytes(24).toString('base64url');
    const now = deps.now();
    const expiresAt = now + SESSION_MS;
    await deps.db('cli_login_sessions').insert({ state_hash: sha256Hex(state), status: 'pending', created_at: now, expires_at: expiresAt });
    ctx.body = {
      success: true,
      data: { state, login_url: `${deps.config.publicBaseUrl}/cli/login?state=${state}`, expires_at: new Date(expiresAt).toISOString(), poll_interval_seconds: POLL_INTERVAL_SECONDS },
    } satisfies CliAuthStartResponse;
  };
}

export function authCallback(deps: AppDeps) {
  return async function handleCallback(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    const state = str(body.state);
    const idToken = str(body.id_token);
    if (!state || !idToken) fail(ERRORS.cliCallbackMissing);
    const session = await deps.db('cli_login_sessions').where({ state_hash: sha256Hex(state) }).first('id', 'status', 'expires_at');
    if (!session || session.status !== 'pending') fail(ERRORS.cliCallbackNotFound);
    if (Number(session.expires_at) <= deps.now()) fail(ERRORS.cliCallbackExpired);
    // Under OIDC the login page sent the identity provider a nonce derived from this state
    // (login-page.ts); the development sign-in page sends none.
    const { account, token } = await accountFromIdToken(deps, idToken, { nonce: deps.identity.kind === 'oidc' ? cliLoginNonce(state) : undefined });
    const now = deps.now();
    await deps.atomic(async (trx) => {
      await spendIdToken(trx, token, now);
      const won = await trx('cli_login_sessions').where({ id: session.id, status: 'pending' }).update({ status: 'complete', account_id: account.id, completed_at: now });
      // Another callback completed the session first: the throw rolls back the token's use too.
      if (won === 0) fail(ERRORS.cliCallbackNotFound);
    });
    ctx.body = { success: true, data: { status: 'complete', account: { email: account.email, name: account.name } } };
  };
}

export function authPoll(deps: AppDeps) {
  return async function handlePoll(ctx: Context): Promise<void> {
    const raw = ctx.query.state;
    const state = typeof raw === 'string' ? raw.trim() : Array.isArray(raw) ? raw[0] : undefined;
    if (!state) fail(ERRORS.cliPollMissingState);
    const session = await deps.db('cli_login_sessions').where({ state_hash: sha256Hex(state) }).first('id', 'status', 'account_id', 'expires_at');
    if (!session) fail(ERRORS.cliPollNotFound);
    if (session.status === 'consumed') fail(ERRORS.cliPollConsumed);
    const now = deps.now();
    let data: CliAuthPollResponse['data'];
    if (Number(session.expires_at) <= now) {
      data = { status: 'expired' };
    } else if (session.status === 'pending') {
      data = { status: 'pending', expires_at: new Date(Number(session.expires_at)).toISOString() };
    } else {
      // Only the poll whose UPDATE flips complete → consumed hands out the token.
      const won = await deps.db('cli_login_sessions').where({ id: session.id, status: 'complete' }).update({ status: 'consumed', consumed_at: now });
      if (won === 0) fail(ERRORS.cliPollConsumed);
      const account = await deps.db('accounts').where({ id: session.account_id }).first('email', 'name');
      const token = await issueLoginToken(deps.db, session.account_id, now, ctx.get('user-agent'));
      data = { status: 'complete', token, account: { email: account.email, name: account.name ?? null } };
      ctx.set('Cache-Control', 'no-store');
    }
    ctx.body = { success: true, data } satisfies CliAuthPollResponse;
  };
}
