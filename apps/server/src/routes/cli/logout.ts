/** POST /api/v1/cli/auth/logout (ours, additive to 4.7) — `reftrack logout` revokes the login token it sends. */
import type { Context } from 'koa';
import type { CliAuthLogoutResponse } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { revokeBearerLoginToken } from '../../auth/login-token.js';

export function authLogout(deps: AppDeps) {
  return async function handleLogout(ctx: Context): Promise<void> {
    const { revokedAt } = await revokeBearerLoginToken(ctx, deps.db, deps.now());
    ctx.body = { success: true, data: { revoked: true, revoked_at: new Date(revokedAt).toISOString() } } satisfies CliAuthLogoutResponse;
  };
}
