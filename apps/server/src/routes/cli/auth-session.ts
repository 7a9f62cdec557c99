/**
 * The CLI login session (3.4, 4.7, 7.6): start → the person confirms the device and pairing code on
 * `login_url` and signs in at the provider, whose code flow the server completes (routes/auth/oidc.ts)
 * — or a script posts the callback with an id_token — → the CLI polls and receives the login token
 * exactly once. Every step is one
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
import { withRefusalLog } from '../../accounts/id-token-sign-in.js';
import { completeCliLogin, pairingCode } from '../../accounts/cli-login.js';
import { cliLoginNonce } from '../../auth/nonce.js';
import type { RequestState } from '../../http/state.js';

const POLL_INTERVAL_SECONDS = 2;
const SESSION_MS = LIMITS.cliLoginSessionSeconds * 1000;

export function authStart(deps: AppDeps) {
  return async function handleStart(ctx: Context): Promise<void> {
    const state = randomBytes(24).toString('base64url');
    const now = deps.now();
    const expiresAt = now + SESSION_MS;
    // What the confirmation page names: the CLI's User-Agent (it carries the host name) and address.
    const device = ctx.get('user-agent').replace(/[^\x20-\x7e]/g, '').trim().slice(0, 200) || null;
    await deps.db('cli_login_sessions').insert({ state_hash: sha256Hex(state), status: 'pending', created_at: now, expires_at: expiresAt, device, started_from: ctx.ip.slice(0, 64) || null });
    ctx.body = {
      success: true,
      data: {
        state,
        login_url: `${deps.config.publicBaseUrl}/cli/login?state=${state}`,
        expires_at: new Date(expiresAt).toISOString(),
        poll_interval_seconds: POLL_INTERVAL_SECONDS,
        pairing_code: pairingCode(state),
      },
    } satisfies CliAuthStartResponse;
  };
}

export function authCallback(deps: AppDeps) {
  return async function handleCallback(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    const state = str(body.state);
    const idToken = str(body.id_token);
    if (!state || !idToken) fail(ERRORS.cliCallbackMissing);
    // Under OIDC a script's id_token must carry the nonce derived from this state (auth/nonce.ts); the
    // development sign-in page sends none.
    const requestId = (ctx.state as RequestState).requestId;
    const { account } = await withRefusalLog(deps, requestId, 'api', () =>
      completeCliLogin(deps, sha256Hex(state), idToken, { nonce: deps.identity.kind === 'oidc' ? cliLoginNonce(state) : undefined, requestId }),
    );
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
