/**
 * GET /demo/shop — the demo shop of `start --demo` (never served otherwise, see app.ts): a page
 * with the tracker embedded exactly as an advertiser embeds it, so the printed test link walks the
 * real flow in a browser: the partner link's click, the click-id cookie, a sign-up (a server-mode
 * lead, reported by this server with the demo key, as an advertiser's backend does with the SDK)
 * and a purchase (a sale, likewise). Its script and style are inline and allowed by hash (CSP).
 */
import type { Context } from 'koa';
import { BRAND, trackerSnippet } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { inlineHash } from '../../http/page-headers.js';
import { DEMO } from '../../seed/demo.js';

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
header{border-bottom:1px solid #d0d7de;margin-bottom:1rem}
.product{display:flex;justify-content:space-between;align-items:center;border:1px solid #d0d7de;border-radius:8px;padding:1rem;margin:1rem 0}
.price{font-size:1.4rem;font-weight:600}
ol{padding-left:1.25rem}
li{margin:.75rem 0}
li[data-state=done] .result{color:#1a7f37}
li[data-state=error] .result{color:#cf222e}
li[data-state=todo] .result{color:#6e7781}
.result{display:block;font-family:ui-monospace,monospace;font-size:.9rem;overflow-wrap:anywhere}
.how{display:block}
button{font:inherit;padding:.4rem 1rem;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}
button:disabled{background:#8c959f;border-color:#8c959f;cursor:not-allowed}
code{font-family:ui-monospace,monospace;background:#f6f8fa;padding:0 .2rem}
.muted{color:#57606a;font-size:.9rem}
`;

// Runs on DOMContentLoaded, after the deferred tracker (deferred scripts run first).
const SCRIPT = `
(() => {
  const $ = (id) => document.getElementById(id);
  const show = (id, state, text) => { const li = $(id); li.dataset.state = state; li.querySelector('.result').textContent = text; };
  const money = (cents, currency) => new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);
  const post = async (path, body) => {
    const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = await res.json().catch(() => null);
    if (!res.ok || !json || !json.success) throw new Error((json && json.error && json.error.message) || 'HTTP ' + res.status);
    return json.data;
  };
  const CUSTOMER = 'reftrack_demo_customer';
  document.addEventListener('DOMContentLoaded', async () => {
    const tracker = window.Reftrack;
    if (!tracker) return show('step-click', 'error', 'The tracker did not load (/tracker.js).');
    const aff = new URLSearchParams(location.search).get('aff');
    const clickId = await tracker.track();
    if (!clickId) return show('step-click', 'todo', 'No referral click yet: open this page through the partner link (?aff=' + $('shop').dataset.link + ').');
    show('step-click', 'done', aff ? 'Click recorded for the partner link ?aff=' + aff + '.' : 'No ?aff= on this visit: the click of an earlier visit still counts (first click wins).');
    show('step-cookie', 'done', 'reftrack_click_id=' + clickId);
    const signup = $('signup');
    const buy = $('buy');
    const known = sessionStorage.getItem(CUSTOMER);
    if (known) {
      show('step-lead', 'done', 'Signed up earlier in this tab as ' + known + '.');
      buy.disabled = false;
    } else {
      signup.disabled = false;
    }
    signup.addEventListener('click', async () => {
      signup.disabled = true;
      try {
        const data = await post('/demo/shop/signup', { click_id: tracker.getClickId() });
        sessionStorage.setItem(CUSTOMER, data.customer_key);
        show('step-lead', 'done', 'Lead ' + data.lead.lead_id + ' recorded: customer ' + data.customer_key + ' is now a ' + data.lead.customer_status + '.');
        buy.disabled = false;
      } catch (err) {
        show('step-lead', 'error', err.message);
        signup.disabled = false;
      }
    });
    buy.addEventListener('click', async () => {
      buy.disabled = true;
      try {
        const data = await post('/demo/shop/buy', { customer_key: sessionStorage.getItem(CUSTOMER) });
        const s = data.sale;
        show('step-sale', s.attributed ? 'done' : 'error', s.attributed
          ? 'Sale ' + s.sale_id + ' (' + s.transaction_id + ') attributed to the partner: commission ' + money(s.commission_amount_cents, s.currency) + '.'
          : 'Sale recorded without attribution: ' + s.reason + '.');
      } catch (err) {
        show('step-sale', 'error', err.message);
      }
      buy.disabled = false;
    });
  });
})();
`;

/** What the page loads, for its content security policy: the tracker from this origin, and the two inline blocks. */
export const DEMO_SHOP_POLICY = { scripts: ["'self'", inlineHash(SCRIPT)], styles: [inlineHash(STYLE)] };

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(programId: number, publicBaseUrl: string): string {
  const link = `${publicBaseUrl}/demo/shop?aff=${DEMO.shortLink}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Demo shop · ${escape(BRAND.name)}</title><link rel="icon" href="data:,">
${trackerSnippet('', programId)}
<style>${STYLE}</style></head>
<body><header><h1>Demo shop</h1><p class="muted">A stand-in for your site, served by <code>start --demo</code>. It embeds the tracker like your pages will:<br><code>${escape(trackerSnippet(publicBaseUrl, programId))}</code></p></header>
<main id="shop" data-link="${DEMO.shortLink}">
<div class="product"><div><strong>Pro plan</strong><div class="muted">One month, billed once</div></div><div class="price">$49.00</div></div>
<ol aria-live="polite">
<li id="step-click" data-state="todo"><strong>A partner's link brings you here</strong><span class="result">Waiting for the tracker…</span></li>
<li id="step-cookie" data-state="todo"><strong>The tracker keeps the click id in a first-party cookie</strong><span class="result">—</span></li>
<li id="step-lead" data-state="todo"><strong>You sign up</strong> <button type="button" id="signup" disabled>Sign up</button>
<span class="muted how">Your server reports the lead with the program key: <code>reftrack.trackLead({ clickId, customerExternalId })</code></span><span class="result">—</span></li>
<li id="step-sale" data-state="todo"><strong>You pay</strong> <button type="button" id="buy" disabled>Buy for $49.00</button>
<span class="muted how">Your server reports the sale: <code>reftrack.trackSale({ customerExternalId, amount: 4900, invoiceId })</code></span><span class="result">—</span></li>
</ol>
<p class="muted">The partner link: <a href="${escape(link)}">${escape(link)}</a>. Then see the click, lead and sale in the <a href="/programs/${programId}/events">dashboard's events</a> (sign in as <code>${escape(DEMO.email)}</code>).</p>
</main><script>${SCRIPT}</script></body></html>`;
}

export function demoShopPage(deps: AppDeps) {
  return async function handleShopPage(ctx: Context): Promise<void> {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page(deps.demo!.programId, deps.config.publicBaseUrl);
  };
}
