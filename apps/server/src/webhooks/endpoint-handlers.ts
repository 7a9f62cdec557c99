/**
 * The webhook endpoint and delivery operations over HTTP, shared by the dashboard API
 * (routes/dashboard/webhooks.ts: an owner's session) and the agent API (routes/agent/webhooks.ts:
 * an agent key). Each route says only how its caller reaches a workspace, an endpoint and a
 * delivery; an endpoint or delivery the caller may not reach answers 404 like a missing one.
 */
import type { Context } from 'koa';
import type { WebhookDeliveriesResponse } from '@reftrack/contract';
import { requestActor } from '../auth/actor.js';
import type { AppDeps } from '../deps.js';
import { readBody } from '../http/input.js';
import { parseEndpointInput } from './endpoint-input.js';
import { createEndpoint, deleteEndpoint, listEndpoints, readEndpoint, rotateSecret, updateEndpoint } from './endpoints.js';
import { listDeliveries, queueTestEvent, readDelivery, resendDelivery } from './deliveries.js';
import { pageQuery } from './page-query.js';

/** How a caller reaches what it may manage: each answers the id, or throws the 404 (or 403) of its API. */
export interface WebhookAccess {
  workspace(ctx: Context): Promise<number>;
  endpoint(ctx: Context): Promise<number>;
  delivery(ctx: Context): Promise<number>;
}

export function webhookHandlers(deps: AppDeps, access: WebhookAccess) {
  return {
    async list(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await listEndpoints(deps.db, await access.workspace(ctx)) };
    },
    async create(ctx: Context): Promise<void> {
      const workspaceId = await access.workspace(ctx);
      const input = parseEndpointInput(readBody(ctx), true);
      ctx.status = 201;
      ctx.body = { success: true, data: await createEndpoint(deps.db, deps.secrets, workspaceId, input, deps.now(), requestActor(ctx)) };
    },
    async get(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await readEndpoint(deps.db, await access.endpoint(ctx)) };
    },
    async update(ctx: Context): Promise<void> {
      const id = await access.endpoint(ctx);
      const input = parseEndpointInput(readBody(ctx), false);
      ctx.body = { success: true, data: await updateEndpoint(deps.db, id, input, deps.now(), requestActor(ctx)) };
    },
    async remove(ctx: Context): Promise<void> {
      await deleteEndpoint(deps.db, await access.endpoint(ctx), deps.now(), requestActor(ctx));
      ctx.body = { success: true, data: null };
    },
    async rotate(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await rotateSecret(deps.db, deps.secrets, await access.endpoint(ctx), deps.now(), requestActor(ctx)) };
    },
    async test(ctx: Context): Promise<void> {
      const id = await access.endpoint(ctx);
      ctx.status = 202;
      ctx.body = { success: true, data: await queueTestEvent(deps.db, id, deps.now()) };
    },
    async deliveries(ctx: Context): Promise<void> {
      const id = await access.endpoint(ctx);
      const { page, pageSize } = pageQuery(ctx.query);
      const { deliveries, total } = await listDeliveries(deps.db, id, page, pageSize);
      ctx.body = { success: true, data: deliveries, meta: { pagination: { page, pageSize, pageCount: Math.ceil(total / pageSize), total } } } satisfies WebhookDeliveriesResponse;
    },
    async delivery(ctx: Context): Promise<void> {
      ctx.body = { success: true, data: await readDelivery(deps.db, await access.delivery(ctx)) };
    },
    async resend(ctx: Context): Promise<void> {
      const id = await access.delivery(ctx);
      ctx.status = 202;
      ctx.body = { success: true, data: await resendDelivery(deps.db, id, deps.now()) };
    },
  };
}
