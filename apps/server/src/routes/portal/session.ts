/**
 * /api/portal/sign-in, /api/portal/sign-in/verify, /api/portal/invitations/accept, /api/portal/session:
 * partners sign in by a one-time e-mail link (docs/partners.md).
 */
import type { Context } from 'koa';
import { ERRORS, PORTAL_SESSION_COOKIE, type PortalMe, type PortalPartnerRecord } from '@reftrack/contract';
import type { Knex } from 'knex';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { acceptInvitation, normalizeEmail, requestSignInLink, verifySignInLink } from '../../domain/portal-access.js';
import { clearPortalCookie, endPortalSession, setPortalCookie } from '../../auth/portal-session.js';

/** Asks for a sign-in link. The answer is the same whether or not the address belongs to a partner. */
export function portalRequestSignIn(deps: AppDeps) {
  return async function handleRequest(ctx: Context): Promise<void> {
    const email = normalizeEmail(readBody(ctx).email);
    if (!email) fail(ERRORS.portalEmailInvalid);
    await deps.atomic((trx) => requestSignInLink(trx, { secrets: deps.secrets, publicBaseUrl: deps.config.publicBaseUrl }, email, deps.now()));
    ctx.status = 202;
    ctx.body = { success: true, data: { sent: true, message: 'If this address belongs to a partner, a sign-in link is on its way. It works once, for 15 minutes.' } };
  };
}

async function answerSignedIn(deps: AppDeps, ctx: Context, session: { token: string; expiresAt: number }): Promise<void> {
  setPortalCookie(ctx, deps.config.publicBaseUrl, session.token, session.expiresAt);
  ctx.body = { success: true, data: { signed_in: true, expires_at: new Date(session.expiresAt).toISOString() } };
}

export function portalVerifySignIn(deps: AppDeps) {
  return async function handleVerify(ctx: Context): Promise<void> {
    const token = readBody(ctx).token;
    await answerSignedIn(deps, ctx, await deps.atomic((trx) => verifySignInLink(trx, token, deps.now())));
  };
}

export function portalAcceptInvitation(deps: AppDeps) {
  return async function handleAccept(ctx: Context): Promise<void> {
    const token = readBody(ctx).token;
    await answerSignedIn(deps, ctx, await deps.atomic((trx) => acceptInvitation(trx, token, deps.now())));
  };
}

/** The person's partner records across workspaces, each with its programs (what the portal switches between). */
export async function portalPartners(db: Knex, personId: number): Promise<PortalPartnerRecord[]> {
  const partners = await db('partner_portal_access as a')
    .join('partners as pa', 'pa.id', 'a.partner_id')
    .leftJoin('workspaces as w', 'w.id', 'pa.workspace_id')
    .where('a.person_id', personId)
    .orderBy('pa.id')
    .select('pa.id', 'pa.name', 'pa.code', 'w.name as workspace_name');
  const ids = partners.map((p) => Number(p.id));
  const programs = ids.length === 0 ? [] : await db('partner_programs as pp').join('programs as pr', 'pr.id', 'pp.program_id').whereIn('pp.partner_id', ids).orderBy('pr.id').select('pp.partner_id', 'pr.id', 'pr.name');
  return partners.map((p) => ({
    partner_id: Number(p.id),
    partner_name: p.name,
    partner_code: p.code,
    workspace_name: p.workspace_name ?? '',
    programs: programs.filter((r) => Number(r.partner_id) === Number(p.id)).map((r) => ({ program_id: Number(r.id), program_name: r.name })),
  }));
}

export function portalMe(deps: AppDeps) {
  return async function handleMe(ctx: Context): Promise<void> {
    const person = ctx.state.portalPerson!;
    const data: PortalMe = { email: person.email, partners: await portalPartners(deps.db, person.personId) };
    ctx.body = { success: true, data };
  };
}

export function portalSignOut(deps: AppDeps) {
  return async function handleSignOut(ctx: Context): Promise<void> {
    await endPortalSession(deps.db, ctx.cookies.get(PORTAL_SESSION_COOKIE));
    clearPortalCookie(ctx, deps.config.publicBaseUrl);
    ctx.body = { success: true, data: { signed_out: true } };
  };
}
