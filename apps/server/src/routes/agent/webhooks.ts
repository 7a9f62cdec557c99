/**
 * /api/agent/v1/webhooks — the agent key's workspace's webhook endpoints (scope `webhooks:manage`),
 * the same operations as the dashboard's (routes/dashboard/webhooks.ts). An endpoint or delivery of
 * another workspace answers 404 like a missing one.
 */
import type { Context } from 'koa';
import { ERRORS, type WebhookDeliveriesResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { parseId } from '../../auth/workspace-access.js';
import { parseEndpointInput } from '../../webhooks/endpoint-input.js';
import { createEndpoint, deleteEndpoint, endpointWorkspace, listEndpoints, readEndpoint, rotateSecret, updateEndpoint } from '../../webhooks/endpoints.js';
import { deliveryWorkspace, listDeliveries, queueTestEvent, readDelivery, resendDelivery } from '../../webhooks/deliveries.js';
import { pageQuery } from '../../webhooks/page-query.js';

async function ownEndpoint(deps: AppDeps, ctx: Context): Promise<number> {
  const id = parseId(ctx.params.id, ERRORS.webhookEndpointNotFound);
  if ((await endpointWorkspace(deps.db, id)) !== ctx.state.agent!.workspaceId) fail(ERRORS.webhookEndpointNotFound);
  return id;
}

async function ownDelivery(deps: AppDeps, ctx: Context): Promise<number> {
  const id = parseId(ctx.params.id, ERRORS.webhookDeliveryNotFound);
  if ((await deliveryWorkspace(deps.db, id)) !== ctx.state.agent!.workspaceId) fail(ERRORS.webhookDeliveryNotFound);
  return id;
}

export function agentWebhooks(deps: AppDeps) {
  return {
    async list(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await listEndpoints(deps.db, ctx.state.agent!.workspaceId) };
    },
    async create(ctx: Context): Promise<void> {
      const input = parseEndpointInput(readBody(ctx), true);
      ctx.status = 201;
      ctx.body = { success: true, data: await createEndpoint(deps.db, deps.secrets, ctx.state.agent!.workspaceId, input, deps.now(), requestActor(ctx)) };
    },
    async get(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await readEndpoint(deps.db, await ownEndpoint(deps, ctx)) };
    },
    async update(ctx: Context): Promise<void> {
      const id = await ownEndpoint(deps, ctx);
      const input = parseEndpointInput(readBody(ctx), false);
      ctx.body = { success: true, data: await updateEndpoint(deps.db, id, input, deps.now(), requestActor(ctx)) };
    },
    async remove(ctx: Context): Promise<void> {
      await deleteEndpoint(deps.db, await ownEndpoint(deps, ctx), deps.now(), requestActor(ctx));
      ctx.body = { success: true, data: null };
    },
    async rotate(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await rotateSecret(deps.db, deps.secrets, await ownEndpoint(deps, ctx), deps.now(), requestActor(ctx)) };
    },
    async test(ctx: Context): Promise<void> {
      const id = await ownEndpoint(deps, ctx);
      ctx.status = 202;
      ctx.body = { success: true, data: await queueTestEvent(deps.db, id, deps.now()) };
    },
    async deliveries(ctx: Context): Promise<void> {
      const id = await ownEndpoint(deps, ctx);
      const { page, pageSize } = pageQuery(ctx.query);
      const { deliveries, total } = await listDeliveries(deps.db, id, page, pageSize);
      ctx.body = { success: true, data: deliveries, meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } } } satisfies WebhookDeliveriesResponse;
    },
    async delivery(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await readDelivery(deps.db, await ownDelivery(deps, ctx)) };
    },
    async resend(ctx: Context): Promise<void> {
      const id = await ownDelivery(deps, ctx);
      ctx.status = 202;
      ctx.body = { success: true, data: await resendDelivery(deps.db, id, deps.now()) };
    },
  };
}
