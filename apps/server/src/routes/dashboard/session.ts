/** POST/GET/DELETE /api/dashboard/session — sign in with an id_token, who am I, sign out. */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { DASHBOARD_SESSION_COOKIE, type SignedOut, type DashboardAccount, type DashboardSession, type DashboardWorkspace } from '@reftrack/contract';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { accountFromIdToken, withRefusalLog } from '../../accounts/id-token-sign-in.js';
import { endSessionUrl } from '../../auth/oidc-flow.js';
import type { RequestState } from '../../http/state.js';
import { spendIdToken } from '../../auth/id-token-use.js';
import { clearSessionCookie, createSession, endSession, setSessionCookie } from '../../auth/dashboard-session.js';

export async function accountSummary(db: Knex, account: DashboardAccount): Promise<DashboardSession> {
  const workspaces: DashboardWorkspace[] = await db('memberships as m').join('workspaces as w', 'w.id', 'm.workspace_id').where('m.account_id', account.id).orderBy('w.id').select('w.id', 'w.name', 'm.role');
  return { account: { id: account.id, email: account.email, name: account.name }, workspaces };
}

export function createDashboardSession(deps: AppDeps) {
  return async function handleSignIn(ctx: Context): Promise<void> {
    // For scripts and the development sign-in page: the id_token is pasted, so no nonce was sent.
    // The browser's sign-in under OIDC is the code flow (routes/auth/oidc.ts).
    const requestId = (ctx.state as RequestState).requestId;
    const body = readBody(ctx);
    const { account, token, expiresAt } = await withRefusalLog(deps, requestId, 'api', async () => {
      const signedIn = await accountFromIdToken(deps, str(body.id_token), { requestId });
      const now = deps.now();
      const session = await deps.atomic(async (trx) => {
        await spendIdToken(trx, signedIn.token, now);
        return createSession(trx, signedIn.account.id, now);
      });
      return { account: signedIn.account, ...session };
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
    // The provider's session ends too when it offers an end-session endpoint: the dashboard goes there next.
    const providerEnd = await endSessionUrl(deps);
    const data: SignedOut = providerEnd ? { signed_out: true, end_session_url: providerEnd } : { signed_out: true };
    ctx.body = { success: true, data };
  };
}
