/**
 * The audit log (docs/security.md, "Audit log"): the outbox's first consumer. Every event written
 * with an actor — an action of a signed-in person, an agent key or the operator — becomes one row:
 * who, what, when, from which address, with the event's payload. Tracking traffic (clicks, leads,
 * sales) has no actor and is not audited. Rows are written in the consumer's transaction, so each
 * event is logged exactly once (jobs/outbox-runner.ts).
 */
import type { Knex } from 'knex';
import { AUDIT_SUMMARIES, auditActorName, type AuditEntry, type DomainEventType, type EventActor } from '@reftrack/contract';
import type { OutboxConsumer } from './outbox-runner.js';
import type { StoredEvent } from '../db/outbox.js';

export const AUDITED_TYPES = Object.keys(AUDIT_SUMMARIES) as DomainEventType[];

export const auditLogConsumer: OutboxConsumer = {
  name: 'audit-log',
  types: AUDITED_TYPES,
  async handle(trx, events) {
    const rows: Array<Record<string, unknown>> = [];
    for (const { event, actor } of events) {
      if (actor === null) continue;
      const row = {
        event_id: event.id,
        program_id: event.program_id,
        action: event.type,
        actor_type: actor.type,
        actor_id: actor.id,
        actor_label: actor.label?.slice(0, 320) ?? null,
        ip: actor.ip?.slice(0, 64) ?? null,
        details: JSON.stringify(event.data),
        occurred_at: Date.parse(event.occurred_at),
      };
      for (const workspaceId of await workspacesOf(trx, event)) rows.push({ ...row, workspace_id: workspaceId });
    }
    if (rows.length > 0) await trx('audit_log').insert(rows).onConflict(['event_id', 'workspace_id']).ignore();
  },
};

/** The event's workspace; for an account-level event, every workspace the account is a member of. */
async function workspacesOf(trx: Knex.Transaction, event: StoredEvent['event']): Promise<number[]> {
  if (event.workspace_id !== null) return [event.workspace_id];
  const accountId = (event.data as { account_id?: unknown }).account_id;
  if (typeof accountId !== 'number') return [];
  const rows = await trx('memberships').where({ account_id: accountId }).orderBy('workspace_id').pluck('workspace_id');
  return rows.map(Number);
}

/** `{a}` or `{a.b}` of the payload, as text. */
function field(data: Record<string, unknown>, path: string): string {
  let value: unknown = data;
  for (const part of path.split('.')) value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined || value === null ? '—' : String(value);
}

/** The sentence of an audit entry, from the contract's template. */
export function auditSummary(action: DomainEventType, actor: EventActor, data: Record<string, unknown>): string {
  const template = AUDIT_SUMMARIES[action] ?? `{actor}: ${action}`;
  return template.replace(/\{([\w.]+)\}/g, (_whole, name: string) => (name === 'actor' ? auditActorName(actor) : field(data, name)));
}

export interface AuditPage {
  entries: AuditEntry[];
  total: number;
}

/** A workspace's audit log, newest first. */
export async function listAuditLog(db: Knex, workspaceId: number, page: number, pageSize: number): Promise<AuditPage> {
  const base = () => db('audit_log').where({ workspace_id: workspaceId });
  const total = Number((await base().count({ n: '*' }).first())?.n ?? 0);
  const rows = await base().orderBy([{ column: 'occurred_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(pageSize).offset((page - 1) * pageSize).select();
  return {
    total,
    entries: rows.map((r): AuditEntry => {
      const actor: EventActor = { type: r.actor_type, id: r.actor_id == null ? null : Number(r.actor_id), label: r.actor_label ?? null, ip: r.ip ?? null };
      return {
        id: Number(r.id),
        event_id: r.event_id,
        action: r.action,
        program_id: r.program_id == null ? null : Number(r.program_id),
        actor,
        summary: auditSummary(r.action, actor, JSON.parse(r.details)),
        occurred_at: new Date(Number(r.occurred_at)).toISOString(),
      };
    }),
  };
}
