/** POST/GET/DELETE /api/dashboard/session — sign in with an id_token, who am I, sign out. */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { DASHBOARD_SESSION_COOKIE, type DashboardAccount, type DashboardSession, type DashboardWorkspace } from '@reftrack/contract';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { accountFromIdToken } from '../../accounts/id-token-sign-in.js';
import { spendIdToken } from '../../auth/id-token-use.js';
import { clearSessionCookie, createSession, endSession, setSessionCookie } from '../../auth/dashboard-session.js';

export async function accountSummary(db: Knex, account: DashboardAccount): Promise<DashboardSession> {
  const workspaces: DashboardWorkspace[] = await db('memberships as m').join('workspaces as w', 'w.id', 'm.workspace_id').where('m.account_id', account.id).orderBy('w.id').select('w.id', 'w.name', 'm.role');
  return { account: { id: account.id, email: account.email, name: account.name }, workspaces };
}

export function createDashboardSession(deps: AppDeps) {
  return async function handleSignIn(ctx: Context): Promise<void> {
    // The dashboard sends no nonce: the id_token is pasted or comes from the development sign-in page.
    const { account, token: idToken } = await accountFromIdToken(deps, str(readBody(ctx).id_token));
    const now = deps.now();
    const { token, expiresAt } = await deps.atomic(async (trx) => {
      await spendIdToken(trx, idToken, now);
      return createSession(trx, account.id, now);
    });
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
