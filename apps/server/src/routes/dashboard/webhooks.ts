/**
 * Outbound webhook endpoints of a workspace (docs/webhooks.md), for its owners (`webhooks:manage`):
 *
 *   GET    /api/dashboard/workspaces/:id/webhooks          the endpoints (never a secret)
 *   POST   /api/dashboard/workspaces/:id/webhooks          create one: 201 with its secret, shown once
 *   GET    /api/dashboard/webhooks/:id                     one endpoint
 *   PATCH  /api/dashboard/webhooks/:id                     change url, event_types, program_id, description, enabled
 *   DELETE /api/dashboard/webhooks/:id                     delete it with its delivery log
 *   POST   /api/dashboard/webhooks/:id/rotate-secret       a new secret, shown once; the old one signs 24 h more
 *   POST   /api/dashboard/webhooks/:id/test                queue a webhook.test delivery (202)
 *   GET    /api/dashboard/webhooks/:id/deliveries          the delivery log, newest first
 *   GET    /api/dashboard/webhook-deliveries/:id           one delivery with every attempt
 *   POST   /api/dashboard/webhook-deliveries/:id/resend    send it again, same webhook-id (202)
 *
 * An endpoint or delivery of a workspace the caller does not own answers 404 like a missing one.
 */
import type { Context } from 'koa';
import { ERRORS, type WebhookDeliveriesResponse } from '@reftrack/contract';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { readBody } from '../../http/input.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { parseEndpointInput } from '../../webhooks/endpoint-input.js';
import { createEndpoint, deleteEndpoint, endpointWorkspace, listEndpoints, readEndpoint, rotateSecret, updateEndpoint } from '../../webhooks/endpoints.js';
import { deliveryWorkspace, listDeliveries, queueTestEvent, readDelivery, resendDelivery } from '../../webhooks/deliveries.js';
import { pageQuery } from '../../webhooks/page-query.js';

async function ownWorkspace(deps: AppDeps, ctx: Context): Promise<number> {
  const { workspaceId } = await workspaceWithRole(deps.db, ctx.state.account!.accountId, parseId(ctx.params.id, ERRORS.workspaceNotFound), 'webhooks:manage');
  return workspaceId;
}

async function ownEndpoint(deps: AppDeps, ctx: Context): Promise<number> {
  const id = parseId(ctx.params.id, ERRORS.webhookEndpointNotFound);
  await workspaceWithRole(deps.db, ctx.state.account!.accountId, await endpointWorkspace(deps.db, id), 'webhooks:manage', ERRORS.webhookEndpointNotFound);
  return id;
}

async function ownDelivery(deps: AppDeps, ctx: Context): Promise<number> {
  const id = parseId(ctx.params.id, ERRORS.webhookDeliveryNotFound);
  await workspaceWithRole(deps.db, ctx.state.account!.accountId, await deliveryWorkspace(deps.db, id), 'webhooks:manage', ERRORS.webhookDeliveryNotFound);
  return id;
}

export function dashboardWebhooks(deps: AppDeps) {
  return {
    async list(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await listEndpoints(deps.db, await ownWorkspace(deps, ctx)) };
    },
    async create(ctx: Context): Promise<void> {
      const workspaceId = await ownWorkspace(deps, ctx);
      const input = parseEndpointInput(readBody(ctx), true);
      ctx.status = 201;
      ctx.body = { success: true, data: await createEndpoint(deps.db, deps.secrets, workspaceId, input, deps.now(), requestActor(ctx)) };
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
