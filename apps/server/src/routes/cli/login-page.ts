/**
 * GET /cli/login?state= — the `login_url` of a CLI login. With the development identity provider it
 * is the e-mail sign-in page; with OIDC it sends the browser to the provider (implicit flow,
 * `response_type=id_token`, client id = OIDC_AUDIENCE) and the return page posts the callback.
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { inlineHash } from '../../http/page-headers.js';
import { cliLoginNonce } from '../../auth/nonce.js';

const RETURN_STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}`;

const RETURN_SCRIPT = `
const p = new URLSearchParams(location.hash.slice(1));
const status = document.getElementById('status');
fetch('/api/v1/cli/auth/callback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state: p.get('state'), id_token: p.get('id_token') }) })
  .then(async (r) => { const j = await r.json().catch(() => ({})); status.textContent = r.ok ? 'Signed in. You can return to your terminal.' : 'Sign-in failed: ' + ((j.error && j.error.message) || r.status); })
  .catch((e) => { status.textContent = 'Sign-in failed: ' + e.message; });
`;

const RETURN_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Reftrack CLI sign-in</title>
<style>${RETURN_STYLE}</style></head>
<body><main><h1>Reftrack CLI sign-in</h1><p id="status" role="status" aria-live="polite">Completing sign-in…</p></main><script>${RETURN_SCRIPT}</script></body></html>`;

/** What the return page loads, for its content security policy (http/page-headers.ts). */
export const CLI_RETURN_PAGE_POLICY = { scripts: [inlineHash(RETURN_SCRIPT)], styles: [inlineHash(RETURN_STYLE)] };

export function cliLoginPage(deps: AppDeps) {
  return async function handleLoginPage(ctx: Context): Promise<void> {
    const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
    if (!/^[A-Za-z0-9_-]{16,100}$/.test(state)) fail(ERRORS.cliPollMissingState);
    const { oidcIssuer, oidcAudience, publicBaseUrl } = deps.config;
    if (deps.identity.kind === 'development' || !oidcIssuer || !oidcAudience) {
      ctx.redirect(`/dev-idp/sign-in?state=${encodeURIComponent(state)}`);
      return;
    }
    const discovery = (await (await fetch(`${oidcIssuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) })).json()) as { authorization_endpoint?: string };
    if (!discovery.authorization_endpoint) fail(ERRORS.serviceUnavailable);
    const url = new URL(discovery.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'id_token',
      response_mode: 'fragment',
      client_id: oidcAudience,
      redirect_uri: `${publicBaseUrl}/cli/login/return`,
      scope: 'openid email profile',
      state,
      // Checked by the callback (auth/nonce.ts): only a token issued for this login completes it.
      nonce: cliLoginNonce(state),
    }).toString();
    ctx.redirect(url.toString());
  };
}

export async function cliLoginReturnPage(ctx: Context): Promise<void> {
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = RETURN_PAGE;
}
