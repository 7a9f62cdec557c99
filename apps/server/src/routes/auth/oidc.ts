/**
 * The browser's sign-in by the authorization code flow (docs/accounts.md): GET /auth/oidc/start
 * (the dashboard's "Sign in with …"), GET /auth/oidc/callback (the redirect URI registered at the
 * provider: a dashboard session, or the completion of a CLI login), GET /signed-out (where the
 * provider's end-session endpoint returns), and GET /api/dashboard/sign-in-options.
 */
import type { Context } from 'koa';
import { BRAND, CLI_LOGIN_CONFIRM, SIGN_IN_PATHS, sameOriginPath, type SignInOptions } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { beginFlow, finishFlow } from '../../auth/oidc-flow.js';
import { accountFromIdToken } from '../../accounts/id-token-sign-in.js';
import { completeCliLogin } from '../../accounts/cli-login.js';
import { spendIdToken } from '../../auth/id-token-use.js';
import { createSession, setSessionCookie } from '../../auth/dashboard-session.js';
import { renderSignInFailure } from '../../http/sign-in-failure.js';
import { escapeHtml, signInPage } from '../../http/sign-in-page.js';
import type { RequestState } from '../../http/state.js';

const returnPath = (deps: AppDeps, value: unknown) => sameOriginPath(typeof value === 'string' ? value : null, deps.config.publicBaseUrl, '/');

export function signInOptions(deps: AppDeps) {
  return async function handleOptions(ctx: Context): Promise<void> {
    const oidcOn = deps.identity.kind === 'oidc';
    const data: SignInOptions = {
      mode: oidcOn ? 'oidc' : 'development',
      provider_name: oidcOn ? (deps.config.oidcProviderName ?? new URL(deps.config.oidcIssuer!).hostname) : null,
      start_url: SIGN_IN_PATHS.start,
    };
    ctx.body = { success: true, data };
  };
}

export function oidcStart(deps: AppDeps) {
  return async function handleStart(ctx: Context): Promise<void> {
    const returnTo = returnPath(deps, ctx.query.return_to);
    if (deps.identity.kind === 'development') {
      ctx.redirect(`/dev-idp/sign-in?return_to=${encodeURIComponent(returnTo)}`);
      return;
    }
    try {
      await beginFlow(ctx, deps, { returnTo });
    } catch (err) {
      renderSignInFailure(ctx, deps, err, 'dashboard', `${SIGN_IN_PATHS.start}?return_to=${encodeURIComponent(returnTo)}`);
    }
  };
}

export function oidcCallback(deps: AppDeps) {
  return async function handleCallback(ctx: Context): Promise<void> {
    const requestId = (ctx.state as RequestState).requestId;
    let where: 'dashboard' | 'cli' = 'dashboard';
    // Every failure below is logged once, with its reason and request id, by renderSignInFailure.
    try {
      const { flow, idToken } = await finishFlow(ctx, deps);
      if (flow.cliStateHash) {
        where = 'cli';
        const { account } = await completeCliLogin(deps, flow.cliStateHash, idToken, { nonce: flow.nonce, requestId });
        deps.logger.info({ request_id: requestId, account_id: account.id }, 'CLI login completed in the browser');
        ctx.type = 'text/html; charset=utf-8';
        ctx.set('Cache-Control', 'no-store');
        ctx.body = signInPage(CLI_LOGIN_CONFIRM.title, `<p class="ok" id="done">${escapeHtml(CLI_LOGIN_CONFIRM.done)}</p><p>Signed in as <strong>${escapeHtml(account.email)}</strong>.</p>`);
        return;
      }
      const { account, token } = await accountFromIdToken(deps, idToken, { nonce: flow.nonce, requestId });
      const now = deps.now();
      const session = await deps.atomic(async (trx) => {
        await spendIdToken(trx, token, now);
        return createSession(trx, account.id, now);
      });
      setSessionCookie(ctx, deps.config.publicBaseUrl, session.token, session.expiresAt);
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect(returnPath(deps, flow.returnTo));
    } catch (err) {
      renderSignInFailure(ctx, deps, err, where, where === 'dashboard' ? SIGN_IN_PATHS.start : null);
    }
  };
}

export async function signedOutPage(ctx: Context): Promise<void> {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = signInPage('Signed out', `<p id="signed-out">You are signed out of ${BRAND.name} and of your identity provider.</p><p><a class="button" href="/">Sign in again</a></p>`);
}
