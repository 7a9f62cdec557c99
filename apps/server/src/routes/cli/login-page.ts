/**
 * GET /cli/login?state= — the `login_url` of a CLI login: a confirmation page naming the device that
 * started the login (its User-Agent, address and time) and the pairing code the CLI prints, so that a
 * login link sent by someone else cannot silently hand them a token for your account. Its "Continue"
 * link (GET /cli/login/continue) carries a value that must equal a SameSite=Strict cookie set by this
 * page: only a click on this page, in this browser, continues — to the provider's code flow
 * (auth/oidc-flow.ts), or to the development sign-in page.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { CLI_LOGIN_CONFIRM, ERRORS } from '@reftrack/contract';
import { ApiError } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { cliStateHash, pairingCode, pendingCliLogin } from '../../accounts/cli-login.js';
import { beginFlow } from '../../auth/oidc-flow.js';
import { renderSignInFailure } from '../../http/sign-in-failure.js';
import { escapeHtml, signInPage } from '../../http/sign-in-page.js';
import { SignInRefused } from '../../accounts/sign-in-refusal.js';

const STATE = /^[A-Za-z0-9_-]{16,100}$/;
const CONFIRM_COOKIE = 'rt_cli_confirm';

function stateOf(ctx: Context): string {
  const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
  if (!STATE.test(state)) throw new ApiError(ERRORS.cliPollMissingState);
  return state;
}

export function cliLoginPage(deps: AppDeps) {
  return async function handleLoginPage(ctx: Context): Promise<void> {
    try {
      const state = stateOf(ctx);
      const session = await pendingCliLogin(deps, cliStateHash(state));
      const confirm = randomBytes(18).toString('base64url');
      const secure = ctx.secure || deps.config.publicBaseUrl.startsWith('https://');
      ctx.append('Set-Cookie', `${CONFIRM_COOKIE}=${confirm}; Path=/cli/login; Max-Age=600; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`);
      const href = `/cli/login/continue?state=${encodeURIComponent(state)}&confirm=${confirm}`;
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Cache-Control', 'no-store');
      ctx.body = signInPage(
        CLI_LOGIN_CONFIRM.title,
        `<p>${escapeHtml(CLI_LOGIN_CONFIRM.lead)}</p>
<dl><dt>Device</dt><dd id="device">${escapeHtml(session.device ?? 'unknown')}</dd><dt>From</dt><dd>${escapeHtml(session.startedFrom ?? 'unknown')}</dd><dt>Started</dt><dd>${escapeHtml(new Date(session.createdAt).toISOString().replace('T', ' ').slice(0, 19))} UTC</dd></dl>
<p>${escapeHtml(CLI_LOGIN_CONFIRM.pairing)}</p><p class="code" id="pairing-code">${escapeHtml(pairingCode(state))}</p>
<p class="warn">${escapeHtml(CLI_LOGIN_CONFIRM.warning)}</p>
<p><a class="button" id="continue" href="${escapeHtml(href)}">${escapeHtml(CLI_LOGIN_CONFIRM.continueButton)}</a></p>`,
      );
    } catch (err) {
      renderSignInFailure(ctx, deps, err, 'cli', null);
    }
  };
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export function cliLoginContinue(deps: AppDeps) {
  return async function handleContinue(ctx: Context): Promise<void> {
    try {
      const state = stateOf(ctx);
      const cookie = ctx.cookies.get(CONFIRM_COOKIE) ?? '';
      const confirm = typeof ctx.query.confirm === 'string' ? ctx.query.confirm : '';
      const site = ctx.get('sec-fetch-site');
      if (!cookie || !same(cookie, confirm) || (site !== '' && site !== 'same-origin')) {
        throw new SignInRefused(ERRORS.crossSiteRefused, 'cross_site', `continue without this browser's confirmation (sec-fetch-site: ${site || 'absent'})`);
      }
      await pendingCliLogin(deps, cliStateHash(state));
      if (deps.identity.kind === 'development') {
        ctx.redirect(`/dev-idp/sign-in?state=${encodeURIComponent(state)}`);
        return;
      }
      await beginFlow(ctx, deps, { cliStateHash: cliStateHash(state) });
    } catch (err) {
      renderSignInFailure(ctx, deps, err, 'cli', null);
    }
  };
}
