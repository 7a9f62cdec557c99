/**
 * Partners' link requests (docs/partners.md, "Link requests"): where a program allows it, a partner
 * asks for another referral link (optionally with the code they want and a note); the owner
 * approves — the link is made by the same path as an owner's own (links.ts) — or declines.
 */
import type { Knex } from 'knex';
import { APPLICATION_LIMITS, ERRORS, IDENTIFIER_PATTERN, type DashboardLink, type DecisionStatus, type EventActor, type LinkRequestView } from '@reftrack/contract';
import type { AppDeps } from '../deps.js';
import { fail } from '../api-error.js';
import { appendEvents } from '../db/outbox.js';
import { insertId } from '../db/insert-id.js';
import { escapeHtml, queueMail } from '../mail/queue.js';
import { createReferralLink, freeIdentifier } from './links.js';
import { readPortalSettings } from './portal-settings.js';
import { str, type Body } from './json-values.js';

const iso = (ms: unknown) => (ms == null ? null : new Date(Number(ms)).toISOString());

function requestQuery(db: Knex) {
  return db('link_requests as r')
    .join('partners as pa', 'pa.id', 'r.partner_id')
    .join('programs as pr', 'pr.id', 'r.program_id')
    .select('r.*', 'pa.code as partner_code', 'pa.name as partner_name', 'pr.name as program_name');
}

const view = (r: Record<string, any>): LinkRequestView => ({ // eslint-disable-line @typescript-eslint/no-explicit-any -- a database row
  id: Number(r.id),
  partner_id: Number(r.partner_id),
  partner_code: r.partner_code,
  partner_name: r.partner_name,
  program_id: Number(r.program_id),
  program_name: r.program_name,
  short_link: r.short_link ?? null,
  note: r.note ?? null,
  status: r.status as DecisionStatus,
  decline_reason: r.decline_reason ?? null,
  link_id: r.link_id == null ? null : Number(r.link_id),
  created_at: iso(r.created_at)!,
  decided_at: iso(r.decided_at),
});

export async function listLinkRequests(db: Knex, filter: { partnerId?: number; programId?: number; status?: DecisionStatus }): Promise<LinkRequestView[]> {
  const rows = await requestQuery(db)
    .modify((q) => {
      if (filter.partnerId !== undefined) q.where('r.partner_id', filter.partnerId);
      if (filter.programId !== undefined) q.where('r.program_id', filter.programId);
      if (filter.status !== undefined) q.where('r.status', filter.status);
    })
    .orderBy('r.id', 'desc')
    .limit(500);
  return rows.map(view);
}

export async function readLinkRequest(db: Knex, id: number): Promise<LinkRequestView | undefined> {
  const row = await requestQuery(db).where('r.id', id).first();
  return row ? view(row) : undefined;
}

/** An optional short_link: absent, or valid and not taken at the time of asking. */
async function wantedShortLink(db: Knex, value: unknown): Promise<string | null> {
  if (value === undefined || value === null || value === '') return null;
  const shortLink = str(value);
  if (!shortLink || !IDENTIFIER_PATTERN.test(shortLink)) fail(ERRORS.shortLinkInvalid);
  if (await db('referral_links').where({ short_link: shortLink }).first('id')) fail(ERRORS.shortLinkTaken);
  return shortLink;
}

/** A partner's request: the program must be one the record is enrolled in and must take requests. */
export async function requestLink(trx: Knex.Transaction, partnerId: number, body: Body, now: number): Promise<LinkRequestView> {
  const programId = typeof body.program_id === 'number' && Number.isInteger(body.program_id) && body.program_id > 0 ? body.program_id : undefined;
  const enrolled = programId === undefined ? undefined : await trx('partner_programs').where({ partner_id: partnerId, program_id: programId }).first('id');
  if (!programId || !enrolled) fail(ERRORS.linkRequestProgramInvalid);
  if (!(await readPortalSettings(trx, programId!)).linkRequestsOpen) fail(ERRORS.linkRequestsClosed);
  const shortLink = await wantedShortLink(trx, body.short_link);
  if (body.note !== undefined && body.note !== null && (typeof body.note !== 'string' || body.note.length > APPLICATION_LIMITS.noteMax)) fail(ERRORS.linkRequestNoteInvalid);
  const note = typeof body.note === 'string' && body.note.trim() ? body.note.trim() : null;
  const pending = await trx('link_requests').where({ partner_id: partnerId, status: 'pending' }).count({ n: '*' }).first();
  if (Number(pending?.n ?? 0) >= APPLICATION_LIMITS.linkRequestsPendingMax) fail(ERRORS.linkRequestLimit, { max: APPLICATION_LIMITS.linkRequestsPendingMax });
  const id = await insertId(trx, 'link_requests', { partner_id: partnerId, program_id: programId, short_link: shortLink, note, status: 'pending', created_at: now });
  return (await readLinkRequest(trx, id))!;
}

type DecisionDeps = Pick<AppDeps, 'secrets' | 'demo' | 'config'>;

async function pendingRequest(trx: Knex.Transaction, id: number): Promise<LinkRequestView> {
  const request = await readLinkRequest(trx, id);
  if (!request) fail(ERRORS.linkRequestNotFound);
  if (request!.status !== 'pending') fail(ERRORS.linkRequestDecided, { status: request!.status });
  return request!;
}

async function decide(trx: Knex.Transaction, id: number, status: 'approved' | 'declined', fields: Record<string, unknown>, actor: EventActor, now: number): Promise<void> {
  const changed = await trx('link_requests').where({ id, status: 'pending' }).update({ status, decided_at: now, decided_by: actor.id, ...fields });
  if (changed !== 1) fail(ERRORS.linkRequestDecided, { status });
}

/** The partner hears of the answer by e-mail, when their record has an address. */
async function tellPartner(trx: Knex.Transaction, deps: DecisionDeps, request: LinkRequestView, workspaceId: number, lines: string[], now: number): Promise<void> {
  const partner = await trx('partners').where({ id: request.partner_id }).first('email');
  if (!partner?.email) return;
  const heading = `Your link request in ${request.program_name}`;
  const text = [heading, '', ...lines, ''].join('\n');
  const html = `<p><strong>${escapeHtml(heading)}</strong></p>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}`;
  await queueMail(trx, deps.secrets, { kind: 'link_request_decided', to: String(partner.email), subject: heading, text, html }, now, workspaceId);
}

/**
 * Approves: the owner's short_link if given, else the one asked for, else one made from the
 * partner's code. A taken short_link throws the unique violation (the caller answers 409).
 */
export async function approveLinkRequest(trx: Knex.Transaction, deps: DecisionDeps, id: number, workspaceId: number, override: unknown, actor: EventActor, now: number): Promise<{ request: LinkRequestView; link: DashboardLink }> {
  const request = await pendingRequest(trx, id);
  let shortLink: string;
  if (override !== undefined && override !== null && override !== '') {
    const given = str(override);
    if (!given || !IDENTIFIER_PATTERN.test(given)) fail(ERRORS.shortLinkInvalid);
    shortLink = given!;
  } else {
    shortLink = request.short_link ?? (await freeIdentifier(trx, 'referral_links', 'short_link', `${request.partner_code}-${request.program_id}`));
  }
  const link = await createReferralLink(trx, deps, { shortLink, partnerId: request.partner_id, programId: request.program_id, active: true }, actor, now);
  await decide(trx, id, 'approved', { link_id: link.id, short_link: shortLink }, actor, now);
  await appendEvents(trx, [{ type: 'link_request.decided', programId: request.program_id, data: { link_request_id: id, partner_id: request.partner_id, program_id: request.program_id, status: 'approved', link_id: link.id, reason: null }, occurredAt: now, actor }]);
  await tellPartner(trx, deps, request, workspaceId, [`Your new referral link ${shortLink} is ready. It is listed in your partner portal.`], now);
  return { request: (await readLinkRequest(trx, id))!, link };
}

export async function declineLinkRequest(trx: Knex.Transaction, deps: DecisionDeps, id: number, workspaceId: number, reason: string | null, actor: EventActor, now: number): Promise<LinkRequestView> {
  const request = await pendingRequest(trx, id);
  await decide(trx, id, 'declined', { decline_reason: reason }, actor, now);
  await appendEvents(trx, [{ type: 'link_request.decided', programId: request.program_id, data: { link_request_id: id, partner_id: request.partner_id, program_id: request.program_id, status: 'declined', link_id: null, reason }, occurredAt: now, actor }]);
  await tellPartner(trx, deps, request, workspaceId, ['The program did not accept your link request.', ...(reason ? [`The program's note: ${reason}`] : [])], now);
  return (await readLinkRequest(trx, id))!;
}
