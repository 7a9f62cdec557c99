/**
 * One browser sign-in by the authorization code flow with PKCE (S256), state and nonce (OAuth 2.0
 * Security BCP 2.1, OIDC Core 3.1). What the callback must check is kept in the browser that started
 * the flow, in an httpOnly cookie sealed with the server's secret box (AES-GCM: neither readable nor
 * forgeable) and named after the state: an answer from the provider completes only a flow this
 * browser started (no login CSRF, no injected code), within FLOW_SECONDS, once (the cookie is cleared
 * by the callback, the code is single-use at the provider, the id_token single-use here). Several
 * tabs may sign in at once, each with its own cookie.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import * as oidc from 'openid-client';
import type { AppDeps } from '../deps.js';
import { OIDC_SCOPES, OidcFlowError, type OidcClient } from './oidc-client.js';
import { SignInRefused } from '../accounts/sign-in-refusal.js';
import { ERRORS } from '@reftrack/contract';

const FLOW_SECONDS = 600;
const COOKIE_PREFIX = 'rt_oidc_';
const COOKIE_PATH = '/auth/oidc';
const PURPOSE = 'oidc-flow';

/** What the flow cookie holds. */
export interface FlowState {
  state: string;
  nonce: string;
  verifier: string;
  /** Dashboard sign-in: the same-origin path to return to. */
  returnTo?: string;
  /** CLI login: the hash of the login session's state. */
  cliStateHash?: string;
  expiresAt: number;
}

const cookieName = (state: string) => COOKIE_PREFIX + createHash('sha256').update(state).digest('base64url').slice(0, 16);

function flowCookie(ctx: Context, deps: Pick<AppDeps, 'config'>, name: string, value: string, maxAge: number): void {
  const parts = [`${name}=${value}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAge}`, 'HttpOnly', 'SameSite=Lax'];
  if (ctx.secure || deps.config.publicBaseUrl.startsWith('https://')) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

export function requireOidc(deps: Pick<AppDeps, 'oidc'>): OidcClient {
  if (!deps.oidc) throw new OidcFlowError('provider_unreachable', 'OIDC_ISSUER is not configured');
  return deps.oidc;
}

/** Starts a flow: sets its cookie and answers with the redirect to the provider's authorization endpoint. */
export async function beginFlow(ctx: Context, deps: Pick<AppDeps, 'oidc' | 'secrets' | 'now' | 'config'>, target: { returnTo?: string; cliStateHash?: string }): Promise<void> {
  const client = requireOidc(deps);
  const configuration = await client.configuration();
  const flow: FlowState = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(), ...target, expiresAt: deps.now() + FLOW_SECONDS * 1000 };
  const url = oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: client.redirectUri,
    scope: OIDC_SCOPES,
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
    code_challenge_method: 'S256',
    state: flow.state,
    nonce: flow.nonce,
  });
  flowCookie(ctx, deps, cookieName(flow.state), deps.secrets.seal(JSON.stringify(flow), PURPOSE), FLOW_SECONDS);
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(url.href);
}

const equal = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Why openid-client refused the provider's answer, as a reason and a line for the log. */
function grantRefusal(err: unknown): Error {
  if (err instanceof oidc.AuthorizationResponseError) return new OidcFlowError('provider_error', `${err.error}: ${err.error_description ?? ''}`);
  if (err instanceof oidc.ResponseBodyError) return new OidcFlowError('token_exchange', `token endpoint answered ${err.status} ${err.error}: ${err.error_description ?? ''}`);
  const e = err as { code?: string; message?: string; cause?: unknown };
  if (err instanceof TypeError || e?.code === 'OAUTH_TIMEOUT' || e?.code === 'ECONNREFUSED' || (e?.message ?? '').includes('fetch failed')) {
    return new OidcFlowError('provider_unreachable', `token endpoint unreachable: ${e?.message ?? String(err)}`);
  }
  const message = e?.message ?? String(err);
  if (/nonce/i.test(message)) return new SignInRefused(ERRORS.idTokenNonceMismatch, 'nonce', message);
  return new SignInRefused(ERRORS.idTokenInvalid, 'id_token_invalid', `${e?.code ?? 'error'}: ${message}`);
}

/**
 * The callback: the flow this browser started for the returned `state`, checked and spent, and the
 * code exchanged for tokens (openid-client checks state, PKCE, issuer, audience, nonce). Returns the
 * flow and the id_token, which the caller signs in with (and verifies again, as every id_token is).
 */
export async function finishFlow(ctx: Context, deps: Pick<AppDeps, 'oidc' | 'secrets' | 'now' | 'config'>): Promise<{ flow: FlowState; idToken: string }> {
  const client = requireOidc(deps);
  const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
  const name = cookieName(state);
  const sealed = state ? ctx.cookies.get(name) : undefined;
  if (!sealed) throw new OidcFlowError('state_mismatch', state ? 'no flow cookie for this state: not started by this browser, expired, or already finished' : 'the callback carries no state');
  flowCookie(ctx, deps, name, '', 0);
  let flow: FlowState;
  try {
    flow = JSON.parse(deps.secrets.open(sealed, PURPOSE)) as FlowState;
  } catch {
    throw new OidcFlowError('state_mismatch', 'the flow cookie does not open (altered, or sealed with another key)');
  }
  if (!equal(flow.state, state)) throw new OidcFlowError('state_mismatch', 'the state differs from the one this browser sent');
  if (flow.expiresAt <= deps.now()) throw new SignInRefused(ERRORS.idTokenInvalid, 'flow_expired', 'the flow is older than its 10 minutes');
  if (typeof ctx.query.error === 'string') {
    throw new OidcFlowError('provider_error', `${ctx.query.error}: ${typeof ctx.query.error_description === 'string' ? ctx.query.error_description : ''}`);
  }
  const configuration = await client.configuration();
  // The URL the provider redirected to, on the public address (behind a proxy ctx.href is the inner one).
  const current = new URL(client.redirectUri);
  current.search = ctx.querystring;
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  try {
    tokens = await oidc.authorizationCodeGrant(configuration, current, { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true });
  } catch (err) {
    throw grantRefusal(err);
  }
  if (!tokens.id_token) throw new SignInRefused(ERRORS.idTokenInvalid, 'id_token_invalid', 'the token response has no id_token');
  return { flow, idToken: tokens.id_token };
}

/** The provider's end-session URL for sign-out, when its discovery names one (RP-Initiated Logout 1.0). */
export async function endSessionUrl(deps: Pick<AppDeps, 'oidc'>): Promise<string | undefined> {
  if (!deps.oidc) return undefined;
  try {
    const configuration = await deps.oidc.configuration();
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    // client_id rather than id_token_hint: the server keeps no id_token after sign-in (docs/decisions.md).
    return oidc.buildEndSessionUrl(configuration, { client_id: deps.oidc.clientId, post_logout_redirect_uri: deps.oidc.postLogoutRedirectUri }).href;
  } catch {
    return undefined;
  }
}
