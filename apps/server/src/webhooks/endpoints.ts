/**
 * A workspace's webhook endpoints (docs/webhooks.md, "Endpoints"): created, changed, deleted and
 * their secret rotated from the dashboard or the agent API, each change with its domain event in
 * the same transaction (the audit log lists them). The signing secret is sealed at rest and shown
 * only in the answer that creates it.
 */
import type { Knex } from 'knex';
import { ERRORS, WEBHOOK_LIMITS, type EventActor, type WebhookEndpoint, type WebhookEndpointWithSecret, type DeliveredEventType } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { appendEvents } from '../db/outbox.js';
import { insertId } from '../db/insert-id.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { checkPartnerTypes, type EndpointInput } from './endpoint-input.js';
import { newSigningSecret, openSecrets, sealSecrets } from './signing.js';

const iso = (ms: unknown): string | null => (ms == null ? null : new Date(Number(ms)).toISOString());

export const ENDPOINT_COLUMNS = [
  'id',
  'workspace_id',
  'partner_id',
  'program_id',
  'url',
  'description',
  'event_types',
  'enabled',
  'disabled_reason',
  'disabled_at',
  'failing_since',
  'previous_secret_expires_at',
  'created_at',
  'updated_at',
];

export function endpointView(row: Record<string, unknown>): WebhookEndpoint {
  return {
    id: Number(row.id),
    workspace_id: Number(row.workspace_id),
    url: String(row.url),
    description: (row.description as string | null) ?? null,
    event_types: String(row.event_types).split(',').filter(Boolean) as DeliveredEventType[],
    program_id: row.program_id == null ? null : Number(row.program_id),
    partner_id: row.partner_id == null ? null : Number(row.partner_id),
    enabled: Boolean(row.enabled),
    disabled_reason: (row.disabled_reason as 'failing' | null) ?? null,
    disabled_at: iso(row.disabled_at),
    failing_since: iso(row.failing_since),
    previous_secret_expires_at: iso(row.previous_secret_expires_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  };
}

/** The URL as the audit log records it: without its query, which some receivers use for a token. */
export const auditUrl = (url: string): string => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
};

export async function listEndpoints(db: Knex, workspaceId: number): Promise<WebhookEndpoint[]> {
  const rows = await db('webhook_endpoints').where({ workspace_id: workspaceId }).orderBy('id').select(ENDPOINT_COLUMNS);
  return rows.map(endpointView);
}

/** The endpoint's workspace (for the caller's permission check), or undefined. */
export async function endpointWorkspace(db: Knex, id: number): Promise<number | undefined> {
  const row = await db('webhook_endpoints').where({ id }).first('workspace_id');
  return row ? Number(row.workspace_id) : undefined;
}

export async function readEndpoint(db: Knex, id: number): Promise<WebhookEndpoint> {
  const row = await db('webhook_endpoints').where({ id }).first(ENDPOINT_COLUMNS);
  if (!row) fail(ERRORS.webhookEndpointNotFound);
  return endpointView(row);
}

async function checkProgram(db: Knex, workspaceId: number, programId: number | null | undefined): Promise<void> {
  if (programId == null) return;
  const row = await db('programs').where({ id: programId, workspace_id: workspaceId }).first('id');
  if (!row) fail(ERRORS.webhookProgramInvalid);
}

async function checkPartner(db: Knex, workspaceId: number, partnerId: number | null | undefined): Promise<void> {
  if (partnerId == null) return;
  const row = await db('partner_programs as pp')
    .join('programs as p', 'p.id', 'pp.program_id')
    .where({ 'pp.partner_id': partnerId, 'p.workspace_id': workspaceId })
    .first('pp.partner_id');
  if (!row) fail(ERRORS.webhookPartnerInvalid);
}

export async function createEndpoint(db: Knex, box: SecretBox, workspaceId: number, input: EndpointInput, now: number, actor: EventActor): Promise<WebhookEndpointWithSecret> {
  await checkProgram(db, workspaceId, input.programId);
  await checkPartner(db, workspaceId, input.partnerId);
  if (input.partnerId != null) checkPartnerTypes(input.eventTypes!);
  const count = Number((await db('webhook_endpoints').where({ workspace_id: workspaceId }).count({ n: '*' }).first())?.n ?? 0);
  if (count >= WEBHOOK_LIMITS.endpointsPerWorkspace) fail(ERRORS.webhookEndpointLimit, { max: WEBHOOK_LIMITS.endpointsPerWorkspace });
  const secret = newSigningSecret();
  const id = await db.transaction(async (trx) => {
    const newId = await insertId(trx, 'webhook_endpoints', {
      workspace_id: workspaceId,
      partner_id: input.partnerId ?? null,
      program_id: input.programId ?? null,
      url: input.url,
      description: input.description ?? null,
      event_types: input.eventTypes!.join(','),
      enabled: input.enabled ?? true,
      secrets_sealed: sealSecrets(box, { current: secret, previous: null }),
      created_at: now,
      updated_at: now,
    });
    await appendEvents(trx, [
      {
        type: 'webhook_endpoint.created',
        programId: input.programId ?? null,
        workspaceId,
        data: { endpoint_id: newId, url: auditUrl(input.url!), event_types: input.eventTypes!, program_id: input.programId ?? null, partner_id: input.partnerId ?? null },
        occurredAt: now,
        actor,
      },
    ]);
    return newId;
  });
  return { ...(await readEndpoint(db, id)), secret };
}

export async function updateEndpoint(db: Knex, id: number, input: EndpointInput, now: number, actor: EventActor): Promise<WebhookEndpoint> {
  const before = await readEndpoint(db, id);
  await checkProgram(db, before.workspace_id, input.programId);
  if (before.partner_id !== null && input.eventTypes) checkPartnerTypes(input.eventTypes);
  const patch: Record<string, unknown> = {};
  const changed: string[] = [];
  if (input.url !== undefined && input.url !== before.url) (patch.url = input.url), changed.push('url');
  if (input.description !== undefined && input.description !== before.description) (patch.description = input.description), changed.push('description');
  if (input.eventTypes !== undefined && input.eventTypes.join(',') !== before.event_types.join(',')) (patch.event_types = input.eventTypes.join(',')), changed.push('event_types');
  if (input.programId !== undefined && input.programId !== before.program_id) (patch.program_id = input.programId), changed.push('program_id');
  if (input.enabled !== undefined && input.enabled !== before.enabled) {
    patch.enabled = input.enabled;
    changed.push('enabled');
    // Switched on again: the failing run starts over, and the notice goes.
    if (input.enabled) Object.assign(patch, { disabled_reason: null, disabled_at: null, failing_since: null });
    else Object.assign(patch, { disabled_reason: null, disabled_at: now });
  }
  if (changed.length === 0) return before;
  await db.transaction(async (trx) => {
    await trx('webhook_endpoints').where({ id }).update({ ...patch, updated_at: now });
    const url = auditUrl((patch.url as string | undefined) ?? before.url);
    const enabled = (patch.enabled as boolean | undefined) ?? before.enabled;
    await appendEvents(trx, [{ type: 'webhook_endpoint.updated', programId: before.program_id, workspaceId: before.workspace_id, data: { endpoint_id: id, url, changed, enabled }, occurredAt: now, actor }]);
  });
  return readEndpoint(db, id);
}

/** Deletes the endpoint with its deliveries and their log. */
export async function deleteEndpoint(db: Knex, id: number, now: number, actor: EventActor): Promise<void> {
  const before = await readEndpoint(db, id);
  await db.transaction(async (trx) => {
    await trx('webhook_attempts').whereIn('delivery_id', trx('webhook_deliveries').where({ endpoint_id: id }).select('id')).delete();
    await trx('webhook_deliveries').where({ endpoint_id: id }).delete();
    await trx('webhook_endpoints').where({ id }).delete();
    await appendEvents(trx, [{ type: 'webhook_endpoint.deleted', programId: before.program_id, workspaceId: before.workspace_id, data: { endpoint_id: id, url: auditUrl(before.url) }, occurredAt: now, actor }]);
  });
}

/**
 * A new signing secret; the current one becomes the previous and keeps signing alongside for 24 h,
 * so receivers can switch without missing a delivery. A secret rotated out earlier is dropped.
 */
export async function rotateSecret(db: Knex, box: SecretBox, id: number, now: number, actor: EventActor): Promise<WebhookEndpointWithSecret> {
  const secret = newSigningSecret();
  const expires = now + WEBHOOK_LIMITS.previousSecretMs;
  await db.transaction(async (trx) => {
    const row = await trx('webhook_endpoints').where({ id }).first('secrets_sealed', 'url', 'workspace_id', 'program_id');
    if (!row) fail(ERRORS.webhookEndpointNotFound);
    const { current } = openSecrets(box, row.secrets_sealed);
    await trx('webhook_endpoints').where({ id }).update({ secrets_sealed: sealSecrets(box, { current: secret, previous: current }), previous_secret_expires_at: expires, updated_at: now });
    await appendEvents(trx, [
      {
        type: 'webhook_endpoint.secret_rotated',
        programId: row.program_id == null ? null : Number(row.program_id),
        workspaceId: Number(row.workspace_id),
        data: { endpoint_id: id, url: auditUrl(row.url), previous_secret_expires_at: new Date(expires).toISOString() },
        occurredAt: now,
        actor,
      },
    ]);
  });
  return { ...(await readEndpoint(db, id)), secret };
}

/** The secrets that sign an attempt now: the current one, and the previous one within its 24 h. */
export function signingSecrets(box: SecretBox, sealed: string, previousExpiresAt: number | null, now: number): string[] {
  const { current, previous } = openSecrets(box, sealed);
  return previous && previousExpiresAt !== null && now < previousExpiresAt ? [current, previous] : [current];
}
