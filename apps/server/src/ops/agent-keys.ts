/**
 * Agent keys as a workspace owner (dashboard, Access) and the operator see them: masked (last 4
 * characters), never the key or its hash; revoked by setting `revoked_at`, after which every
 * process refuses the key (auth/agent-key.ts reads the row on each request). Revoked keys stay
 * listed: an owner can see what was revoked and when.
 */
import type { Knex } from 'knex';
import type { EventActor } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import { operatorActor } from '../auth/actor.js';
import type { AgentScope, DashboardAgentKey } from '@reftrack/contract';
import { maskKey } from '../auth/secret-hash.js';
import { AgentKeyError } from '../auth/agent-key.js';

const COLUMNS = ['id', 'workspace_id', 'name', 'scopes', 'key_last4', 'created_at', 'last_used_at', 'revoked_at'] as const;
const iso = (ms: unknown): string | null => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

function view(row: Record<(typeof COLUMNS)[number], unknown>): DashboardAgentKey {
  return {
    id: Number(row.id),
    workspace_id: Number(row.workspace_id),
    name: (row.name as string | null) ?? null,
    scopes: String(row.scopes).split(',').filter(Boolean) as AgentScope[],
    key_masked: maskKey(row.key_last4 as string | null),
    created_at: iso(row.created_at)!,
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

/** The workspace's keys, newest first. */
export async function listAgentKeys(db: Knex, workspaceId: number): Promise<DashboardAgentKey[]> {
  const rows = await db('agent_keys').where({ workspace_id: workspaceId }).orderBy('id', 'desc').select(...COLUMNS);
  return rows.map(view);
}

/** The workspace a key belongs to, for the caller's permission check; undefined when there is no such key. */
export async function agentKeyWorkspace(db: Knex, keyId: number): Promise<number | undefined> {
  const row = await db('agent_keys').where({ id: keyId }).first('workspace_id');
  return row ? Number(row.workspace_id) : undefined;
}

/** Revokes a key; idempotent (an already revoked key keeps its first revocation time). */
export async function revokeAgentKey(db: Knex, keyId: number, now: number, actor: EventActor): Promise<DashboardAgentKey | undefined> {
  return db.transaction(async (trx) => {
    const revoked = await trx('agent_keys').where({ id: keyId }).whereNull('revoked_at').update({ revoked_at: now });
    const row = await trx('agent_keys').where({ id: keyId }).first(...COLUMNS, 'workspace_id');
    if (revoked > 0 && row) {
      const data = { agent_key_id: keyId, name: (row.name as string | null) ?? null };
      await appendEvents(trx, [{ type: 'agent_key.revoked', programId: null, workspaceId: Number(row.workspace_id), data, occurredAt: now, actor }]);
    }
    return row ? view(row) : undefined;
  });
}

/** Operator: the workspace's keys; an unknown workspace is an error, not an empty list. */
export async function listWorkspaceAgentKeys(db: Knex, workspaceId: number): Promise<DashboardAgentKey[]> {
  if (!(await db('workspaces').where({ id: workspaceId }).first('id'))) throw new AgentKeyError(`workspace ${workspaceId} not found`);
  return listAgentKeys(db, workspaceId);
}

/** Operator: revoke by id; an unknown id is an error. */
export async function revokeAgentKeyById(db: Knex, keyId: number, now: number): Promise<DashboardAgentKey> {
  const key = await revokeAgentKey(db, keyId, now, operatorActor());
  if (!key) throw new AgentKeyError(`agent key ${keyId} not found`);
  return key;
}
