/**
 * The outbox consumer of outbound webhooks: for each event of a webhook type, one delivery row per
 * endpoint it routes to (webhooks/payloads.ts), written in the cursor's transaction — so an event
 * gets its deliveries exactly once, and a crash before the commit writes none and moves no cursor.
 * Sending is the delivery worker's (jobs/webhook-worker.ts), never the request's or this pass's.
 */
import { WEBHOOK_EVENT_TYPES } from '@reftrack/contract';
import type { OutboxConsumer } from './outbox-runner.js';
import { routes, webhookBody, type RoutedEndpoint } from '../webhooks/payloads.js';
import { deliveryRow } from '../webhooks/deliveries.js';
import { deliveriesQueued } from '../webhooks/wakeup.js';

/** Rows per INSERT (11 bindings a row). */
const INSERT_ROWS = 80;

export const webhookDeliveryConsumer: OutboxConsumer = {
  name: 'webhooks',
  types: WEBHOOK_EVENT_TYPES,
  // No enabled endpoint anywhere: `handle` would write nothing for any event, so the pass skips
  // reading them (measured: their reads and payloads were ~5% of a SQLite sale's event-loop time).
  async idle(q) {
    return !(await q('webhook_endpoints').where({ enabled: true }).first('id'));
  },
  async handle(trx, events, now) {
    const workspaces = [...new Set(events.map((e) => e.event.workspace_id).filter((w): w is number => w !== null))];
    if (workspaces.length === 0) return;
    const endpoints: RoutedEndpoint[] = (
      await trx('webhook_endpoints').whereIn('workspace_id', workspaces).where({ enabled: true }).select('id', 'workspace_id', 'program_id', 'partner_id', 'event_types')
    ).map((r) => ({
      id: Number(r.id),
      workspaceId: Number(r.workspace_id),
      programId: r.program_id == null ? null : Number(r.program_id),
      partnerId: r.partner_id == null ? null : Number(r.partner_id),
      eventTypes: String(r.event_types).split(','),
    }));
    if (endpoints.length === 0) return;
    const rows: Array<Record<string, unknown>> = [];
    for (const { event } of events) {
      for (const endpoint of endpoints) {
        if (routes(endpoint, event)) rows.push(deliveryRow(endpoint.id, event.id, event.type, webhookBody(endpoint, event), now));
      }
    }
    for (let i = 0; i < rows.length; i += INSERT_ROWS) {
      await trx('webhook_deliveries').insert(rows.slice(i, i + INSERT_ROWS)).onConflict(['endpoint_id', 'message_id']).ignore();
    }
  },
  committed: deliveriesQueued,
};
