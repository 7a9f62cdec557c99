/** POST/GET/DELETE /api/dashboard/session — sign in with an id_token, who am I, sign out. */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { DASHBOARD_SESSION_COOKIE, ERRORS, type DashboardAccount, type DashboardSession, type DashboardWorkspace } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { signIn } from '../../accounts/sign-in.js';
import { clearSessionCookie, createSession, endSession, setSessionCookie } from '../../auth/dashboard-session.js';

export async function accountSummary(db: Knex, account: DashboardAccount): Promise<DashboardSession> {
  const workspaces: DashboardWorkspace[] = await db('memberships as m').join('workspaces as w', 'w.id', 'm.workspace_id').where('m.account_id', account.id).orderBy('w.id').select('w.id', 'w.name', 'm.role');
  return { account: { id: account.id, email: account.email, name: account.name }, workspaces };
}

/** Verifies an id_token and signs its account in (creating it on first sign-in). */
export async function accountFromIdToken(deps: AppDeps, idToken: string | undefined) {
  if (!idToken) fail(ERRORS.idTokenRequired);
  const identity = await deps.identity.verify(idToken);
  if (!identity) fail(ERRORS.idTokenInvalid);
  return signIn(deps.db, identity, deps.now());
}

export function createDashboardSession(deps: AppDeps) {
  return async function handleSignIn(ctx: Context): Promise<void> {
    const account = await accountFromIdToken(deps, str(readBody(ctx).id_token));
    const { token, expiresAt } = await createSession(deps.db, account.id, deps.now());
    setSessionCookie(ctx, deps.config.publicBaseUrl, token, expiresAt);
    ctx.body = { success: true, data: { ...(await accountSummary(deps.db, account)), expires_at: new Date(expiresAt).toISOString() } };
  };
}

export function currentDashboardSession(deps: AppDeps) {
  return async function handleWhoAmI(ctx: Context): Promise<void> {
    const a = ctx.state.account!;
    ctx.body = { success: true, data: await accountSummary(deps.db, { id: a.accountId, email: a.email, name: a.name }) };
  };
}

export function deleteDashboardSession(deps: AppDeps) {
  return async function handleSignOut(ctx: Context): Promise<void> {
    await endSession(deps.db, ctx.cookies.get(DASHBOARD_SESSION_COOKIE));
    clearSessionCookie(ctx, deps.config.publicBaseUrl);
    ctx.body = { success: true, data: { signed_out: true } };
  };
}
