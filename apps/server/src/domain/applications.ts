/**
 * Applications to a program (docs/partners.md, "Applications"): a public page takes them, the
 * owner approves or declines. Approval is one transaction: the partner record (or the workspace's
 * partner with that address), its enrollment, a default referral link, the portal invitation and
 * its queued e-mail, and the decision's audit event — all or nothing.
 */
import type { Knex } from 'knex';
import { APPLICATION_LIMITS, ERRORS, type DashboardApplication, type DashboardLink, type DecisionStatus, type EventActor } from '@reftrack/contract';
import type { AppDeps } from '../deps.js';
import { fail } from '../api-error.js';
import { appendEvents } from '../db/outbox.js';
import { insertId } from '../db/insert-id.js';
import { escapeHtml, queueMail } from '../mail/queue.js';
import { invitePartner, normalizeEmail } from './portal-access.js';
import { createReferralLink, freeIdentifier } from './links.js';
import type { Body } from './json-values.js';

export interface ApplicationInput {
  name: string;
  email: string;
  website: string | null;
  promotion: string;
}

/** Validates the public form; the first bad field answers 400 and nothing is stored. */
export function parseApplication(body: Body): ApplicationInput {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  if (!name || name.length > APPLICATION_LIMITS.nameMax) fail(ERRORS.applicationNameInvalid);
  const email = normalizeEmail(body.email);
  if (!email) fail(ERRORS.applicationEmailInvalid);
  let website: string | null = null;
  if (body.website !== undefined && body.website !== null && body.website !== '') {
    const raw = typeof body.website === 'string' ? body.website.trim() : '';
    let ok = raw.length > 0 && raw.length <= APPLICATION_LIMITS.websiteMax;
    if (ok) {
      try {
        const url = new URL(raw);
        ok = (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
      } catch {
        ok = false;
      }
    }
    if (!ok) fail(ERRORS.applicationWebsiteInvalid);
    website = raw;
  }
  const promotion = typeof body.promotion === 'string' ? body.promotion.trim() : '';
  if (!promotion || promotion.length > APPLICATION_LIMITS.promotionMax) fail(ERRORS.applicationPromotionInvalid);
  return { name, email: email!, website, promotion };
}

/**
 * Stores an application. A second one while the first is pending is dropped by the database's
 * partial unique index (one pending application per program and address); the caller answers the
 * same either way, so the form never tells whether an address applied before or is a partner.
 */
export async function submitApplication(trx: Knex.Transaction, programId: number, input: ApplicationInput, now: number): Promise<void> {
  await trx('partner_applications')
    .insert({ program_id: programId, name: input.name, email: input.email, website: input.website, promotion: input.promotion, status: 'pending', created_at: now })
    .onConflict()
    .ignore();
}

const iso = (ms: unknown) => (ms == null ? null : new Date(Number(ms)).toISOString());

export async function listApplications(db: Knex, programId: number, workspaceId: number, filter: { status?: DecisionStatus; id?: number }): Promise<DashboardApplication[]> {
  const rows: Array<Record<string, any>> = await db('partner_applications as a') // eslint-disable-line @typescript-eslint/no-explicit-any -- database rows
    .where('a.program_id', programId)
    .modify((q) => {
      if (filter.status) q.where('a.status', filter.status);
      if (filter.id !== undefined) q.where('a.id', filter.id);
    })
    .orderBy('a.id', 'desc')
    .limit(500)
    .select('a.*');
  const emails = [...new Set(rows.map((r) => String(r.email)))];
  const existing: Array<Record<string, unknown>> = emails.length === 0 ? [] : await db('partners').where({ workspace_id: workspaceId }).whereIn('email', emails).orderBy('id').select('id', 'email');
  const byEmail = new Map<string, number>();
  for (const p of existing) if (!byEmail.has(String(p.email))) byEmail.set(String(p.email), Number(p.id));
  return rows.map((r) => ({
    id: Number(r.id),
    program_id: Number(r.program_id),
    name: r.name,
    email: r.email,
    website: r.website ?? null,
    promotion: r.promotion,
    status: r.status as DecisionStatus,
    decline_reason: r.decline_reason ?? null,
    partner_id: r.partner_id == null ? null : Number(r.partner_id),
    existing_partner_id: byEmail.get(String(r.email)) ?? null,
    created_at: iso(r.created_at)!,
    decided_at: iso(r.decided_at),
  }));
}

/** A pending application of the program: 404 for another program's or a missing one, 409 once decided. */
async function pendingApplication(trx: Knex.Transaction, applicationId: number, programId: number): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- a database row
  const row = await trx('partner_applications').where({ id: applicationId, program_id: programId }).first();
  if (!row) fail(ERRORS.applicationNotFound);
  if (row.status !== 'pending') fail(ERRORS.applicationDecided, { status: row.status });
  return row;
}

/** Moves a pending application to `status`, once: a concurrent decision finds it decided (409). */
async function decide(trx: Knex.Transaction, id: number, status: 'approved' | 'declined', fields: Record<string, unknown>, actor: EventActor, now: number): Promise<void> {
  const changed = await trx('partner_applications').where({ id, status: 'pending' }).update({ status, decided_at: now, decided_by: actor.id, ...fields });
  if (changed !== 1) fail(ERRORS.applicationDecided, { status });
}

export interface ApprovalResult {
  partnerId: number;
  link: DashboardLink;
  invitationId: number;
}

type DecisionDeps = Pick<AppDeps, 'secrets' | 'demo' | 'config'>;

/** The partner code an applicant gets: their name as letters, digits and hyphens, made unique. */
const codeStem = (name: string, email: string): string =>
  (name.normalize('NFKD').replace(/[^\w\s-]/g, '').trim().toLowerCase().replace(/[\s_]+/g, '-').replace(/[^a-z0-9-]/g, '').replace(/-+/g, '-').replace(/^-|-$/g, '') || email.split('@')[0]!.replace(/[^A-Za-z0-9_-]/g, '').toLowerCase()).slice(0, 40) || 'partner';

export async function approveApplication(trx: Knex.Transaction, deps: DecisionDeps, program: { id: number; workspaceId: number }, applicationId: number, actor: EventActor, now: number): Promise<ApprovalResult> {
  const app = await pendingApplication(trx, applicationId, program.id);
  const email = String(app.email);
  // The workspace's partner with this address, if any, is the applicant: enrolled, not duplicated.
  const existing = await trx('partners').where({ workspace_id: program.workspaceId, email }).orderBy('id').first('id', 'code');
  let partnerId: number;
  let code: string;
  if (existing) {
    partnerId = Number(existing.id);
    code = String(existing.code);
  } else {
    code = await freeIdentifier(trx, 'partners', 'code', codeStem(String(app.name), email));
    partnerId = await insertId(trx, 'partners', { name: String(app.name).slice(0, 200), email, code, workspace_id: program.workspaceId, created_at: now });
  }
  const shortLink = await freeIdentifier(trx, 'referral_links', 'short_link', code);
  const link = await createReferralLink(trx, deps, { shortLink, partnerId, programId: program.id, active: true }, actor, now);
  const workspace = await trx('workspaces').where({ id: program.workspaceId }).first('name');
  const partnerName = (await trx('partners').where({ id: partnerId }).first('name')).name as string;
  const { invitationId } = await invitePartner(trx, { secrets: deps.secrets, publicBaseUrl: deps.config.publicBaseUrl }, { id: partnerId, name: partnerName, workspaceId: program.workspaceId, workspaceName: workspace?.name ?? '' }, email, actor, now);
  await decide(trx, applicationId, 'approved', { partner_id: partnerId }, actor, now);
  await appendEvents(trx, [{ type: 'partner_application.decided', programId: program.id, data: { application_id: applicationId, program_id: program.id, email, status: 'approved', partner_id: partnerId, reason: null }, occurredAt: now, actor }]);
  return { partnerId, link, invitationId };
}

/** Declines; with `notify`, the applicant gets a short e-mail (with the reason, when given). */
export async function declineApplication(trx: Knex.Transaction, deps: DecisionDeps, program: { id: number; workspaceId: number; name: string }, applicationId: number, reason: string | null, notify: boolean, actor: EventActor, now: number): Promise<void> {
  const app = await pendingApplication(trx, applicationId, program.id);
  await decide(trx, applicationId, 'declined', { decline_reason: reason }, actor, now);
  await appendEvents(trx, [{ type: 'partner_application.decided', programId: program.id, data: { application_id: applicationId, program_id: program.id, email: String(app.email), status: 'declined', partner_id: null, reason }, occurredAt: now, actor }]);
  if (!notify) return;
  const heading = `Your application to ${program.name}`;
  const lines = [`Thank you for applying to the partner program ${program.name}. The program did not accept your application this time.`, ...(reason ? [`The program's note: ${reason}`] : [])];
  const text = [heading, '', ...lines, ''].join('\n');
  const html = `<p><strong>${escapeHtml(heading)}</strong></p>${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('')}`;
  await queueMail(trx, deps.secrets, { kind: 'application_declined', to: String(app.email), subject: heading, text, html }, now, program.workspaceId);
}
