/**
 * Which endpoints an event goes to, and the body each receives (WebhookEvent in the contract): the
 * domain event's payload — its objects as the dashboard API shows them — with its id, type,
 * version, time and program. A partner's endpoint receives only that partner's leads, sales and
 * commissions, and never a customer key (which may be an e-mail address).
 */
import {
  PARTNER_WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_VERSIONS,
  WEBHOOK_TEST_MESSAGE,
  type DeliveredEventType,
  type WebhookEvent,
  type WebhookEventType,
} from '@reftrack/contract';
import type { StoredEvent } from '../db/outbox.js';

/** What routing needs of an endpoint. */
export interface RoutedEndpoint {
  id: number;
  workspaceId: number;
  programId: number | null;
  partnerId: number | null;
  eventTypes: readonly string[];
}

/** The partner an event is about (the object's partner_id), or null. */
function partnerOf(event: StoredEvent['event']): number | null {
  const data = event.data as Record<string, { partner_id?: unknown } | undefined>;
  for (const key of ['lead', 'sale', 'commission'] as const) {
    const id = data[key]?.partner_id;
    if (typeof id === 'number') return id;
  }
  return null;
}

export function routes(endpoint: RoutedEndpoint, event: StoredEvent['event']): boolean {
  if (event.workspace_id !== endpoint.workspaceId) return false;
  if (!endpoint.eventTypes.includes(event.type)) return false;
  if (endpoint.programId !== null && event.program_id !== endpoint.programId) return false;
  if (endpoint.partnerId !== null) {
    if (!(PARTNER_WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type)) return false;
    if (partnerOf(event) !== endpoint.partnerId) return false;
  }
  return true;
}

/** A copy of the payload without customer keys: what a partner's endpoint receives. */
function forPartner(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    out[key] = value && typeof value === 'object' && 'customer_key' in value ? { ...(value as object), customer_key: null } : value;
  }
  return out;
}

/** The JSON body of the event's delivery to `endpoint`. */
export function webhookBody(endpoint: Pick<RoutedEndpoint, 'partnerId'>, event: StoredEvent['event']): string {
  const type = event.type as WebhookEventType;
  const data = endpoint.partnerId === null ? event.data : forPartner(event.data as Record<string, unknown>);
  const body: WebhookEvent = { id: event.id, type, version: WEBHOOK_EVENT_VERSIONS[type], timestamp: event.occurred_at, program_id: event.program_id, data } as WebhookEvent;
  return JSON.stringify(body);
}

/** The body of a test delivery ("Send test event"). */
export function testBody(id: string, endpointId: number, at: number): string {
  const type: DeliveredEventType = 'webhook.test';
  const body: WebhookEvent<'webhook.test'> = {
    id,
    type,
    version: WEBHOOK_EVENT_VERSIONS[type],
    timestamp: new Date(at).toISOString(),
    program_id: null,
    data: { endpoint_id: endpointId, message: WEBHOOK_TEST_MESSAGE },
  };
  return JSON.stringify(body);
}
