/**
 * GET /dev/mailbox — the development mailbox (docs/partners.md, "E-mail"): on a development server
 * without SMTP_URL, the mail the server sent, newest first, so a fresh machine can follow sign-in
 * links. Any other server answers 404: the page exists only where the mail never left the machine.
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { escapeHtml, openMailBody } from '../../mail/queue.js';

export const DEV_MAILBOX_POLICY = {};

export function devMailbox(deps: AppDeps) {
  return async function handleMailbox(ctx: Context): Promise<void> {
    if (deps.config.mail.smtpUrl || deps.config.exposedBecause.length > 0) fail(ERRORS.mailboxNotFound);
    const rows = await deps.db('mail_messages').where({ transport: 'dev' }).orderBy('id', 'desc').limit(50).select('id', 'to_address', 'subject', 'body_sealed', 'sent_at');
    const items = rows.map((r) => {
      let text = '';
      try {
        text = r.body_sealed ? openMailBody(deps.secrets, r.body_sealed).text : '';
      } catch {
        text = '(this message was sealed with a key this server no longer has)';
      }
      const linked = escapeHtml(text).replace(/(https?:\/\/[^\s<]+)/g, '<a href="$1">$1</a>');
      return `<article><h2>${escapeHtml(r.subject)}</h2><p>To: ${escapeHtml(r.to_address)} · ${new Date(Number(r.sent_at)).toISOString()}</p><pre>${linked}</pre></article>`;
    });
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Development mailbox · Reftrack</title></head><body><main><h1>Development mailbox</h1><p>No SMTP_URL is set: the mail this server sends is shown here and in its log.</p>${items.join('') || '<p>No mail yet.</p>'}</main></body></html>`;
  };
}
