/**
 * The built-in development identity provider (active only without OIDC_ISSUER): a sign-in page
 * where one types an e-mail, and the token endpoint it calls. It signs the person into the
 * dashboard, or completes a CLI login when the page was opened from `login_url` (`?state=`).
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { signDevToken } from '../../auth/id-token.js';

const EMAIL = /^[^@\s]{1,200}@[^@\s]{1,200}$/;

export function devToken(deps: AppDeps) {
  return async function handleDevToken(ctx: Context): Promise<void> {
    if (deps.identity.kind !== 'development') fail(ERRORS.routeNotFound);
    const email = str(readBody(ctx).email)?.toLowerCase();
    if (!email || !EMAIL.test(email)) fail(ERRORS.partnerEmailInvalid);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: { id_token: await signDevToken(deps.db, email) } };
  };
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sign in — Reftrack (development)</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}label{display:block;font-weight:600;margin:.5rem 0}input{font:inherit;width:100%;padding:.5rem;box-sizing:border-box;border:1px solid #666;border-radius:4px}button{font:inherit;margin-top:1rem;padding:.5rem 1rem;background:#1d4ed8;color:#fff;border:0;border-radius:4px;cursor:pointer}button:focus,input:focus{outline:3px solid #f59e0b}.note{background:#fff7d6;padding:.5rem;border-radius:4px}#status{margin-top:1rem}</style>
</head><body><main>
<h1>Sign in to Reftrack</h1>
<p class="note">Development identity provider: any e-mail signs in. Configure <code>OIDC_ISSUER</code> for production.</p>
<form id="f"><label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<button type="submit">Sign in</button></form>
<p id="status" role="status" aria-live="polite"></p>
</main><script>
const params = new URLSearchParams(location.search);
const status = document.getElementById('status');
async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((json.error && json.error.message) || ('HTTP ' + res.status));
  return json;
}
document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  status.textContent = 'Signing in…';
  try {
    const token = (await post('/dev-idp/token', { email: document.getElementById('email').value })).data.id_token;
    const state = params.get('state');
    if (state) {
      await post('/api/v1/cli/auth/callback', { state, id_token: token });
      status.textContent = 'Signed in. You can return to your terminal.';
      return;
    }
    await post('/api/dashboard/session', { id_token: token });
    const next = params.get('return_to') || '/';
    location.assign(next.startsWith('/') && !next.startsWith('//') ? next : '/');
  } catch (err) { status.textContent = 'Sign-in failed: ' + err.message; }
});
</script></body></html>`;

export function devSignInPage(deps: AppDeps) {
  return async function handlePage(ctx: Context): Promise<void> {
    if (deps.identity.kind !== 'development') fail(ERRORS.routeNotFound);
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = PAGE;
  };
}
