/** Request bodies of the endpoint routes (dashboard and agent API) → checked values, or the catalogue's 400. */
import { ERRORS, PARTNER_WEBHOOK_EVENT_TYPES, WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS, type WebhookEventType } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { Body } from '../domain/json-values.js';

export interface EndpointInput {
  url?: string;
  description?: string | null;
  eventTypes?: WebhookEventType[];
  programId?: number | null;
  partnerId?: number | null;
  enabled?: boolean;
}

export function parseUrl(value: unknown): string {
  if (typeof value !== 'string' || value.length > WEBHOOK_LIMITS.urlMaxLength) fail(ERRORS.webhookUrlInvalid);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    fail(ERRORS.webhookUrlInvalid);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname || url.username || url.password) fail(ERRORS.webhookUrlInvalid);
  return url.toString();
}

function parseEventTypes(value: unknown): WebhookEventType[] {
  const all = WEBHOOK_EVENT_TYPES as readonly string[];
  if (!Array.isArray(value) || value.length === 0 || value.some((t) => typeof t !== 'string' || !all.includes(t))) {
    fail(ERRORS.webhookEventTypesInvalid, { types: WEBHOOK_EVENT_TYPES.join(', ') });
  }
  return [...new Set(value as WebhookEventType[])];
}

function optionalId(value: unknown, error: typeof ERRORS.webhookProgramInvalid): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) fail(error);
  return value;
}

/** `create`: url and event_types are required; otherwise only the members given are changed. */
export function parseEndpointInput(body: Body, create: boolean): EndpointInput {
  const input: EndpointInput = {};
  if (create || body.url !== undefined) input.url = parseUrl(body.url);
  if (create || body.event_types !== undefined) input.eventTypes = parseEventTypes(body.event_types);
  if (body.program_id !== undefined) input.programId = optionalId(body.program_id, ERRORS.webhookProgramInvalid);
  if (body.partner_id !== undefined) {
    if (!create) fail(ERRORS.webhookPartnerFixed);
    input.partnerId = optionalId(body.partner_id, ERRORS.webhookPartnerInvalid);
  }
  if (body.enabled !== undefined) {
    if (typeof body.enabled !== 'boolean') fail(ERRORS.webhookEnabledInvalid);
    input.enabled = body.enabled;
  }
  if (body.description !== undefined) {
    if (body.description !== null && (typeof body.description !== 'string' || body.description.length > WEBHOOK_LIMITS.descriptionMaxLength)) fail(ERRORS.webhookDescriptionInvalid);
    input.description = body.description === null || body.description.trim() === '' ? null : body.description.trim();
  }
  if (!create && Object.keys(input).length === 0) fail(ERRORS.noFieldsToUpdate);
  return input;
}

/** A partner endpoint subscribes only to the partner's types. */
export function checkPartnerTypes(types: readonly string[]): void {
  if (types.some((t) => !(PARTNER_WEBHOOK_EVENT_TYPES as readonly string[]).includes(t))) fail(ERRORS.webhookPartnerEventTypesInvalid, { types: PARTNER_WEBHOOK_EVENT_TYPES.join(', ') });
}
