/**
 * /api/dashboard/programs/:id/payments — the processor connection (6.1: "connected in the dashboard").
 * The webhook signing secret is stored encrypted for the intake and never read back; the answer
 * shows the connection's own intake address (`intake_url`), the one to give Stripe.
 */
import type { Context } from 'koa';
import { ERRORS, INPUT_RULES, ROUTES, type PaymentsConnection } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { connectionOfProgram, deleteConnection, saveConnection } from '../../db/processor-connections.js';

async function view(deps: AppDeps, programId: number): Promise<PaymentsConnection> {
  const connection = await connectionOfProgram(deps.db, programId);
  const base = deps.config.publicBaseUrl;
  return {
    provider: 'stripe',
    connected: Boolean(connection?.accountId),
    stripe_account_id: connection?.accountId ?? null,
    webhook_secret_set: Boolean(connection),
    webhook_url: base + ROUTES.stripeWebhook.path,
    intake_url: connection ? base + ROUTES.stripeWebhookEndpoint.path.replace(':endpointId', connection.endpointId) : null,
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
    if (!account || !INPUT_RULES.stripeAccountId.test(account)) fail(ERRORS.stripeAccountInvalid);
    if (!secret || !INPUT_RULES.stripeWebhookSecret.test(secret)) fail(ERRORS.webhookSecretInvalid);
    await saveConnection(deps.db, deps.secrets, id, account, secret, deps.now(), requestActor(ctx));
    ctx.body = { success: true, data: await view(deps, id) };
  };
}

export function disconnectPayments(deps: AppDeps) {
  return async function handleDisconnect(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'payments:write');
    await deleteConnection(deps.db, id, deps.now(), requestActor(ctx));
    ctx.body = { success: true, data: await view(deps, id) };
  };
}
