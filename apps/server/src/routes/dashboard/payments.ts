/**
 * /api/dashboard/programs/:id/payments — the processor connection (6.1: "connected in the dashboard").
 * The webhook signing secret is stored for the intake and never read back.
 */
import type { Context } from 'koa';
import { ERRORS, type PaymentsConnection } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';

async function view(deps: AppDeps, programId: number): Promise<PaymentsConnection> {
  const row = await deps.db('programs').where({ id: programId }).first('stripe_account_id', 'stripe_webhook_secret');
  return {
    provider: 'stripe',
    connected: Boolean(row?.stripe_account_id && row?.stripe_webhook_secret),
    stripe_account_id: row?.stripe_account_id ?? null,
    webhook_secret_set: Boolean(row?.stripe_webhook_secret),
    webhook_url: `${deps.config.publicBaseUrl}/api/v1/webhooks/stripe`,
  };
}

export function getPayments(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'programs:read');
    ctx.body = { success: true, data: await view(deps, id) };
  };
}

export function connectPayments(deps: AppDeps) {
  return async function handleConnect(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'payments:write');
    const body = readBody(ctx);
    const account = str(body.stripe_account_id);
    const secret = str(body.webhook_secret);
    if (!account || !/^acct_[A-Za-z0-9]{1,100}$/.test(account)) fail(ERRORS.stripeAccountInvalid);
    if (!secret || !/^whsec_[A-Za-z0-9+/=_-]{1,200}$/.test(secret)) fail(ERRORS.webhookSecretInvalid);
    await deps.db('programs').where({ id }).update({ stripe_account_id: account, stripe_webhook_secret: secret, updated_at: deps.now() });
    ctx.body = { success: true, data: await view(deps, id) };
  };
}

export function disconnectPayments(deps: AppDeps) {
  return async function handleDisconnect(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'payments:write');
    await deps.db('programs').where({ id }).update({ stripe_account_id: null, stripe_webhook_secret: null, updated_at: deps.now() });
    ctx.body = { success: true, data: await view(deps, id) };
  };
}
