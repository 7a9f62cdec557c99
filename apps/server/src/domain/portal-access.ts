/**
 * Partners as people (docs/partners.md): invitations that bind a person to a partner record, and
 * sign-in by a one-time e-mail link. Tokens are random, stored only as SHA-256 hashes, short-lived
 * and spent by one conditional UPDATE (single use even under concurrent clicks). The mail carrying
 * a token is queued in the same transaction (mail/queue.ts) and sent by the outbox's mail consumer.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { ERRORS, INPUT_RULES, PORTAL_LIMITS, PORTAL_PATHS, type EventActor } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { sha256Hex } from '../auth/secret-hash.js';
import { insertId } from '../db/insert-id.js';
import { appendEvents } from '../db/outbox.js';
import { escapeHtml, queueMail } from '../mail/queue.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { createPortalSession } from '../auth/portal-session.js';

const MINUTE = 60_000;

export function normalizeEmail(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const email = value.trim().toLowerCase();
  return email.length <= INPUT_RULES.portalEmailMaxLength && INPUT_RULES.portalEmail.test(email) ? email : undefined;
}

const newToken = (): string => randomBytes(32).toString('base64url');

interface MailDeps {
  secrets: SecretBox;
  publicBaseUrl: string;
}

function linkMail(heading: string, lines: string[], url: string, button: string): { text: string; html: string } {
  const text = [heading, '', ...lines, '', url, ''].join('\n');
  const html = `<p><strong>${escapeHtml(heading)}</strong></p>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}<p><a href="${escapeHtml(url)}">${escapeHtml(button)}</a></p><p>${escapeHtml(url)}</p>`;
  return { text, html };
}

/** An owner's invitation: earlier open invitations of this partner stop working; the mail is queued. */
export async function invitePartner(trx: Knex.Transaction, deps: MailDeps, partner: { id: number; name: string; workspaceId: number; workspaceName: string }, email: string, actor: EventActor, now: number): Promise<{ invitationId: number; expiresAt: number }> {
  await trx('portal_invitations').where({ partner_id: partner.id }).whereNull('accepted_at').where('expires_at', '>', now).update({ expires_at: now });
  const token = newToken();
  const expiresAt = now + PORTAL_LIMITS.invitationDays * 86_400_000;
  const invitationId = await insertId(trx, 'portal_invitations', { partner_id: partner.id, email, token_hash: sha256Hex(token), invited_by: actor.id, created_at: now, expires_at: expiresAt });
  const url = `${deps.publicBaseUrl}${PORTAL_PATHS.invitation}?token=${token}`;
  const body = linkMail(
    `${partner.workspaceName} invites you to its partner portal`,
    [`You are invited as the partner "${partner.name}". The portal shows your referral links, their clicks, leads and sales, your commissions and payouts.`, `The link works once and for ${PORTAL_LIMITS.invitationDays} days.`],
    url,
    'Accept the invitation',
  );
  await queueMail(trx, deps.secrets, { kind: 'portal_invitation', to: email, subject: `Your partner portal at ${partner.workspaceName}`, ...body }, now, partner.workspaceId);
  await appendEvents(trx, [{ type: 'partner.invited', programId: null, workspaceId: partner.workspaceId, data: { partner_id: partner.id, invitation_id: invitationId, email }, occurredAt: now, actor }]);
  return { invitationId, expiresAt };
}

async function personFor(trx: Knex.Transaction, email: string, now: number): Promise<number> {
  await trx('portal_people').insert({ email, created_at: now }).onConflict('email').ignore();
  const row = await trx('portal_people').where({ email }).first('id');
  return Number(row.id);
}

/** Spends an invitation: its e-mail becomes (or is) a person bound to the partner; a session starts. */
export async function acceptInvitation(trx: Knex.Transaction, token: unknown, now: number): Promise<{ token: string; expiresAt: number }> {
  if (typeof token !== 'string' || token.length < INPUT_RULES.portalTokenMinLength || token.length > INPUT_RULES.portalTokenMaxLength) fail(ERRORS.invitationInvalid);
  const invitation = await trx('portal_invitations').where({ token_hash: sha256Hex(token as string) }).whereNull('accepted_at').where('expires_at', '>', now).first('id', 'partner_id', 'email');
  if (!invitation) fail(ERRORS.invitationInvalid);
  const spent = await trx('portal_invitations').where({ id: invitation.id }).whereNull('accepted_at').update({ accepted_at: now });
  if (spent !== 1) fail(ERRORS.invitationInvalid);
  const personId = await personFor(trx, String(invitation.email), now);
  await trx('partner_portal_access').insert({ partner_id: invitation.partner_id, person_id: personId, created_at: now }).onConflict('partner_id').merge({ person_id: personId, created_at: now });
  await trx('portal_people').where({ id: personId }).update({ last_sign_in_at: now });
  return createPortalSession(trx, personId, now);
}

/**
 * A sign-in link for `email` — only when it is a person bound to at least one partner, and at most
 * PORTAL_LIMITS.signInPerEmail per window. The caller answers the same in every case, so the
 * answer never tells whether an address has an account.
 */
export async function requestSignInLink(trx: Knex.Transaction, deps: MailDeps, email: string, now: number): Promise<void> {
  const person = await trx('portal_people as p').join('partner_portal_access as a', 'a.person_id', 'p.id').where('p.email', email).first('p.id');
  if (!person) return;
  const windowStart = now - PORTAL_LIMITS.rateWindowMinutes * MINUTE;
  const recent = await trx('portal_sign_in_tokens').where({ person_id: person.id }).where('created_at', '>', windowStart).count({ n: '*' }).first();
  if (Number(recent?.n ?? 0) >= PORTAL_LIMITS.signInPerEmail) return;
  const token = newToken();
  await trx('portal_sign_in_tokens').insert({ person_id: person.id, token_hash: sha256Hex(token), created_at: now, expires_at: now + PORTAL_LIMITS.signInLinkMinutes * MINUTE });
  const url = `${deps.publicBaseUrl}${PORTAL_PATHS.verify}?token=${token}`;
  const body = linkMail('Sign in to your partner portal', [`This link signs you in once and works for ${PORTAL_LIMITS.signInLinkMinutes} minutes. If you did not ask for it, ignore this e-mail.`], url, 'Sign in');
  await queueMail(trx, deps.secrets, { kind: 'portal_sign_in', to: email, subject: 'Your sign-in link', ...body }, now);
}

/** Spends a sign-in link and starts a session. */
export async function verifySignInLink(trx: Knex.Transaction, token: unknown, now: number): Promise<{ token: string; expiresAt: number }> {
  if (typeof token !== 'string' || token.length < INPUT_RULES.portalTokenMinLength || token.length > INPUT_RULES.portalTokenMaxLength) fail(ERRORS.portalSignInLinkInvalid);
  const row = await trx('portal_sign_in_tokens').where({ token_hash: sha256Hex(token as string) }).whereNull('used_at').where('expires_at', '>', now).first('id', 'person_id');
  if (!row) fail(ERRORS.portalSignInLinkInvalid);
  const spent = await trx('portal_sign_in_tokens').where({ id: row.id }).whereNull('used_at').update({ used_at: now });
  if (spent !== 1) fail(ERRORS.portalSignInLinkInvalid);
  await trx('portal_people').where({ id: row.person_id }).update({ last_sign_in_at: now });
  return createPortalSession(trx, Number(row.person_id), now);
}
