/**
 * The built-in development identity provider (active only without OIDC_ISSUER): a sign-in page
 * where one types an e-mail, and the token endpoint it calls. It signs the person into the
 * dashboard, or completes a CLI login when the page was opened from `login_url` (`?state=`).
 */
import type { Context } from 'koa';
import { ERRORS, sameOriginPath } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { signDevToken } from '../../auth/id-token.js';
import { inlineHash } from '../../http/page-headers.js';

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

/** The page's one style sheet and one script, inline: the policy allows exactly these by hash. */
const STYLE = `:root{font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#18181b;background:#f6f7f9}*{box-sizing:border-box}body{margin:0}
.top{background:#111827;color:#fff;padding:.6rem 1.25rem;font-weight:700;font-size:1.1rem}.top span{color:#60a5fa}
main{max-width:32rem;margin:2rem auto;padding:0 1rem}h1{font-size:1.6rem;line-height:1.25;margin:0 0 1rem}
.panel{background:#fff;border:1px solid #d4d4d8;border-radius:8px;padding:1.25rem}
label{display:block;font-weight:600;margin:0 0 .25rem}input{font:inherit;width:100%;min-height:2.5rem;padding:.5rem .6rem;border:1px solid #71717a;border-radius:6px}
button{font:inherit;margin-top:1rem;min-height:2.5rem;padding:.45rem 1rem;background:#1d4ed8;color:#fff;border:1px solid #1d4ed8;border-radius:6px;cursor:pointer}button:hover{background:#1e3a8a}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.note{background:#fff7d6;border:1px solid #d6a400;padding:.65rem .85rem;border-radius:6px;margin:0 0 1rem}
#status{margin:1rem 0 0}#status:empty{display:none}#status.ok{background:#e8f7ef;border:1px solid #6ccf9c;color:#065f46;font-weight:600;padding:.65rem .85rem;border-radius:6px}#status.fail{background:#fdecec;border:1px solid #f19999;color:#7f1d1d;padding:.65rem .85rem;border-radius:6px}
`;

/**
 * `return_to` is resolved with `sameOriginPath` (the contract's, inlined here so the page needs no
 * other script): only an address on this page's own origin is followed.
 */
const SCRIPT = `
${sameOriginPath.toString()}
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
  status.className = '';
  try {
    const token = (await post('/dev-idp/token', { email: document.getElementById('email').value })).data.id_token;
    const state = params.get('state');
    if (state) {
      await post('/api/v1/cli/auth/callback', { state, id_token: token });
      status.textContent = 'Signed in. You can return to your terminal.';
      status.className = 'ok';
      document.getElementById('f').hidden = true;
      return;
    }
    await post('/api/dashboard/session', { id_token: token });
    location.assign(sameOriginPath(params.get('return_to'), location.origin, '/'));
  } catch (err) { status.textContent = 'Sign-in failed: ' + err.message; status.className = 'fail'; }
});
`;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sign in — Reftrack (development)</title>
<style>${STYLE}</style>
</head><body><div class="top"><span aria-hidden="true">◆</span> Reftrack</div><main>
<h1>Sign in to Reftrack</h1>
<div class="panel">
<p class="note">Development identity provider: any e-mail signs in. Configure <code>OIDC_ISSUER</code> for production.</p>
<form id="f"><label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="email" required autofocus>
<button type="submit">Sign in</button></form>
<p id="status" role="status" aria-live="polite"></p>
</div>
</main><script>${SCRIPT}</script></body></html>`;

/** What the page loads, for its content security policy (http/page-headers.ts). */
export const DEV_SIGN_IN_PAGE_POLICY = { scripts: [inlineHash(SCRIPT)], styles: [inlineHash(STYLE)] };

export function devSignInPage(deps: AppDeps) {
  return async function handlePage(ctx: Context): Promise<void> {
    if (deps.identity.kind !== 'development') fail(ERRORS.routeNotFound);
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = PAGE;
  };
}
