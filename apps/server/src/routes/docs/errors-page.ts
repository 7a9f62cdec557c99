/** GET /docs/errors — the error reference page that `docs_url` and the rotation `Link` header point to. */
import type { Context } from 'koa';
import { ERROR_CODE_DESCRIPTIONS, ERRORS, STATUS_NAMES, type ErrorCode } from '@reftrack/contract';
import { inlineHash } from '../../http/page-headers.js';

const escape = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}code{background:#f2f2f2;padding:0 .2em}table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top}section{margin:1.5rem 0}';

/** The page runs no script and has one inline style sheet (http/page-headers.ts). */
export const ERRORS_PAGE_POLICY = { styles: [inlineHash(STYLE)] };

function render(): string {
  const codes = Object.entries(ERROR_CODE_DESCRIPTIONS) as [ErrorCode, string][];
  const sections = codes
    .map(([code, description]) => {
      const messages = Object.values(ERRORS)
        .filter((e) => 'code' in e && e.code === code)
        .map((e) => `<li><code>${e.status}</code> ${escape(e.message)}</li>`)
        .join('');
      return `<section id="${code}"><h2><a href="#${code}">${code}</a></h2><p>${escape(description)}</p>${messages ? `<ul>${messages}</ul>` : ''}</section>`;
    })
    .join('\n');
  const rows = Object.values(ERRORS)
    .filter((e) => e.status >= 400)
    .map((e) => `<tr><td>${e.status}</td><td>${STATUS_NAMES[e.status] ?? ''}</td><td>${'code' in e && e.code ? `<a href="#${e.code}">${e.code}</a>` : ''}</td><td>${escape(e.message)}</td></tr>`)
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Reftrack error reference</title>
<style>${STYLE}</style>
</head><body><h1>Reftrack error reference</h1>
<p>Clients read <code>error.code</code> first and fall back to <code>error.message</code>. Platform errors: <code>{data: null, error: {status, name, message, details, code?}}</code>. Typed errors: <code>{error: {code, message, ...}}</code>.</p>
${sections}
<h2 id="all-messages">Every message</h2><table><thead><tr><th>Status</th><th>Name</th><th>Code</th><th>Message</th></tr></thead><tbody>${rows}</tbody></table>
</body></html>`;
}

let page: string | undefined;

export async function errorsPage(ctx: Context): Promise<void> {
  page ??= render();
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.body = page;
}
