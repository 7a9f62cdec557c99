/**
 * /api/agent/v1/webhooks — the agent key's workspace's webhook endpoints (scope `webhooks:manage`),
 * the same operations as the dashboard's (webhooks/endpoint-handlers.ts). An endpoint or delivery
 * of another workspace answers 404 like a missing one.
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { AppDeps } from '../../deps.js';
import { parseId } from '../../auth/workspace-access.js';
import { endpointWorkspace } from '../../webhooks/endpoints.js';
import { deliveryWorkspace } from '../../webhooks/deliveries.js';
import { webhookHandlers } from '../../webhooks/endpoint-handlers.js';

export function agentWebhooks(deps: AppDeps) {
  const keyWorkspace = (ctx: Context): number => ctx.state.agent!.workspaceId;
  return webhookHandlers(deps, {
    workspace: async (ctx) => keyWorkspace(ctx),
    async endpoint(ctx) {
      const id = parseId(ctx.params.id, ERRORS.webhookEndpointNotFound);
      if ((await endpointWorkspace(deps.db, id)) !== keyWorkspace(ctx)) fail(ERRORS.webhookEndpointNotFound);
      return id;
    },
    async delivery(ctx) {
      const id = parseId(ctx.params.id, ERRORS.webhookDeliveryNotFound);
      if ((await deliveryWorkspace(deps.db, id)) !== keyWorkspace(ctx)) fail(ERRORS.webhookDeliveryNotFound);
      return id;
    },
  });
}
