/**
 * The plain HTML pages of the browser's sign-in legs (a refused sign-in, the CLI login's
 * confirmation, "return to your terminal"): no script, one inline style allowed by its hash, every
 * value escaped. A refusal names what to try and the request id the operator finds in the log.
 */
import { BRAND, SIGN_IN_REFUSALS, type SignInRefusalReason } from '@reftrack/contract';
import { inlineHash } from './page-headers.js';

const STYLE = `:root{font:16px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#18181b;background:#f6f7f9}*{box-sizing:border-box}body{margin:0}
.top{background:#111827;color:#fff;padding:.6rem 1.25rem;font-weight:700;font-size:1.1rem}main{max-width:34rem;margin:2rem auto;padding:0 1rem}h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}
.panel{background:#fff;border:1px solid #d4d4d8;border-radius:8px;padding:1.25rem}dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
.code{font:700 2rem/1.2 ui-monospace,monospace;letter-spacing:.15em;background:#eef2ff;border:1px solid #818cf8;border-radius:6px;padding:.5rem 1rem;display:inline-block;margin:.25rem 0 1rem}
.warn{background:#fff7d6;border:1px solid #d6a400;padding:.65rem .85rem;border-radius:6px}.ok{background:#e8f7ef;border:1px solid #6ccf9c;padding:.65rem .85rem;border-radius:6px;font-weight:600}
a.button{display:inline-block;margin-top:1rem;padding:.5rem 1.1rem;background:#1d4ed8;color:#fff;border-radius:6px;text-decoration:none;font-weight:600}a.button:hover{background:#1e3a8a}
:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}.rid{color:#52525b;font-size:.9rem}code{font-size:.95em}`;

/** For the route's `pageHeaders`: the one style block, no script. */
export const SIGN_IN_PAGE_POLICY = { styles: [inlineHash(STYLE)] };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A whole page around `bodyHtml` (already escaped). */
export function signInPage(title: string, bodyHtml: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex">
<title>${escapeHtml(title)} — ${BRAND.name}</title><style>${STYLE}</style></head>
<body><div class="top">${BRAND.name}</div><main><h1>${escapeHtml(title)}</h1><div class="panel">${bodyHtml}</div></main></body></html>`;
}

export function refusalPage(reason: SignInRefusalReason, requestId: string, startOver: string | null): string {
  const text = SIGN_IN_REFUSALS[reason];
  return signInPage(
    text.title,
    `<p>${escapeHtml(text.message)}</p><p><strong>What to try:</strong> ${escapeHtml(text.tryThis)}</p>` +
      (startOver ? `<p><a class="button" href="${escapeHtml(startOver)}">Start again</a></p>` : '') +
      `<p class="rid">Request id: <code id="request-id">${escapeHtml(requestId)}</code></p>`,
  );
}
