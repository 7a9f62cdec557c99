/**
 * `reftrack webhooks …` (docs/cli.md): the dashboard's webhook routes for the CLI login token. This
 * gate authenticates the token and names its account exactly as a dashboard session does, so the
 * same handlers (routes/dashboard/webhooks.ts, mounted again in app.ts under /api/v1/cli/) apply
 * the same rules: owners only, 404 outside the account's workspaces.
 */
import type { Context, Next } from 'koa';
import type { AppDeps } from '../../deps.js';
import { authenticateLoginToken, LOGIN_TOKEN_ERRORS } from '../../auth/login-token.js';

export function cliLoginAccount(deps: AppDeps) {
  return async function loginAccountGate(ctx: Context, next: Next): Promise<void> {
    const account = await authenticateLoginToken(ctx, deps.db, LOGIN_TOKEN_ERRORS.programs, deps.now());
    ctx.state.account = { sessionId: 0, accountId: account.id, email: account.email, name: account.name };
    await next();
  };
}
