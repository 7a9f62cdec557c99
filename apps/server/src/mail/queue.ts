/**
 * Queuing outgoing mail (docs/partners.md, "E-mail"). A message is written in the transaction of
 * the action that sends it, with a `mail.queued` event; the outbox's mail consumer hands it to the
 * mail worker (jobs/mail.ts, mail/worker.ts). So a message exists exactly when its action
 * committed, and sending it — retried on failure — never fails the action.
 * The body carries one-time links, so it is encrypted at rest and cleared once sent over SMTP.
 */
import type { Knex } from 'knex';
import { appendEvents } from '../db/outbox.js';
import { insertId } from '../db/insert-id.js';
import type { SecretBox } from '../secrets/secret-box.js';

export const MAIL_BODY_PURPOSE = 'mail_messages.body_sealed';

export interface OutgoingMail {
  kind: 'portal_invitation' | 'portal_sign_in' | 'webhook_endpoint_disabled' | 'application_declined' | 'link_request_decided';
  to: string;
  subject: string;
  text: string;
  html: string;
}

export async function queueMail(trx: Knex.Transaction, box: SecretBox, mail: OutgoingMail, now: number, workspaceId: number | null = null): Promise<number> {
  const body = box.seal(JSON.stringify({ text: mail.text, html: mail.html }), MAIL_BODY_PURPOSE);
  const id = await insertId(trx, 'mail_messages', { kind: mail.kind, to_address: mail.to, subject: mail.subject.slice(0, 200), body_sealed: body, status: 'queued', attempts: 0, created_at: now });
  await appendEvents(trx, [{ type: 'mail.queued', programId: null, workspaceId, data: { mail_id: id, kind: mail.kind }, occurredAt: now, actor: null }]);
  return id;
}

export function openMailBody(box: SecretBox, sealed: string): { text: string; html: string } {
  return JSON.parse(box.open(sealed, MAIL_BODY_PURPOSE)) as { text: string; html: string };
}

/** Minimal HTML escaping for the values put into mail bodies. */
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
