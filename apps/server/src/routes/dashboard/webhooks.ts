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
 * The handlers are webhooks/endpoint-handlers.ts, shared with the agent API.
 */
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { endpointWorkspace } from '../../webhooks/endpoints.js';
import { deliveryWorkspace } from '../../webhooks/deliveries.js';
import { webhookHandlers } from '../../webhooks/endpoint-handlers.js';

// The caller's account must hold `webhooks:manage` in the workspace: the route's workspace, or
// the endpoint's or delivery's (whose 404 it answers when it does not).
export function dashboardWebhooks(deps: AppDeps) {
  return webhookHandlers(deps, {
    async workspace(ctx) {
      const { workspaceId } = await workspaceWithRole(deps.db, ctx.state.account!.accountId, parseId(ctx.params.id, ERRORS.workspaceNotFound), 'webhooks:manage');
      return workspaceId;
    },
    async endpoint(ctx) {
      const id = parseId(ctx.params.id, ERRORS.webhookEndpointNotFound);
      await workspaceWithRole(deps.db, ctx.state.account!.accountId, await endpointWorkspace(deps.db, id), 'webhooks:manage', ERRORS.webhookEndpointNotFound);
      return id;
    },
    async delivery(ctx) {
      const id = parseId(ctx.params.id, ERRORS.webhookDeliveryNotFound);
      await workspaceWithRole(deps.db, ctx.state.account!.accountId, await deliveryWorkspace(deps.db, id), 'webhooks:manage', ERRORS.webhookDeliveryNotFound);
      return id;
    },
  });
}
