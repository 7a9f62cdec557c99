/**
 * Agent keys (5.6): `agt_` keys for approved tools, scoped to one workspace, stored as hashes;
 * revoked by a workspace owner (dashboard) or the operator. Nothing caches a key: every request
 * reads its row, so a revocation holds on every process at once.
 */
import { insertId } from '../db/insert-id.js';
import { appendEvents } from '../db/outbox.js';
import { operatorActor } from './actor.js';
import type { Context, Next } from 'koa';
import { AGENT_SCOPES, BRAND, ERRORS, type AgentScope } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { Db } from '../db/knex.js';
import { parseBearer } from './bearer.js';
import { hashesEqual, sha256Hex } from './secret-hash.js';
import { newAgentKey } from '../domain/ids.js';
import { touchLastUsed } from './last-used.js';

export interface AgentContext {
  keyId: number;
  workspaceId: number;
  scopes: AgentScope[];
}

declare module 'koa' {
  interface DefaultState {
    agent?: AgentContext;
  }
}

export class AgentKeyError extends Error {}

export async function createAgentKey(db: Db, workspaceId: number, scopes: string[], name: string | null, now = Date.now()): Promise<string> {
  const unknown = scopes.filter((s) => !(AGENT_SCOPES as readonly string[]).includes(s));
  if (scopes.length === 0 || unknown.length) throw new AgentKeyError(`scopes must be among ${AGENT_SCOPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
  const workspace = await db('workspaces').where({ id: workspaceId }).first('id');
  if (!workspace) throw new AgentKeyError(`workspace ${workspaceId} not found`);
  const key = newAgentKey();
  const unique = [...new Set(scopes)];
  await db.transaction(async (trx) => {
    const id = await insertId(trx, 'agent_keys', { workspace_id: workspaceId, key_hash: sha256Hex(key), key_last4: key.slice(-4), name, scopes: unique.join(','), created_at: now });
    // Agent keys are made by the operator (`reftrack-server agent-keys create`).
    await appendEvents(trx, [{ type: 'agent_key.created', programId: null, workspaceId, data: { agent_key_id: id, name, scopes: unique }, occurredAt: now, actor: operatorActor() }]);
  });
  return key;
}

/** Authenticates the agent key; a program key is refused (5.6), as is a key lacking `scope`. */
export function requireAgentScope(db: Db, scope: AgentScope, now: () => number = Date.now) {
  return async function agentGate(ctx: Context, next: Next): Promise<void> {
    const parsed = parseBearer(ctx.get('authorization') || undefined);
    if (parsed.kind !== 'token') throw new ApiError(ERRORS.agentKeyMalformed);
    const hash = sha256Hex(parsed.token);
    const row = await db('agent_keys').where({ key_hash: hash }).whereNull('revoked_at').first('id', 'workspace_id', 'scopes', 'key_hash', 'last_used_at');
    if (!row || !hashesEqual(row.key_hash, hash)) {
      const isProgramKey = parsed.token.startsWith(BRAND.programKeyPrefix) || Boolean(await db('program_keys').where({ key_hash: hash }).first('id'));
      throw new ApiError(isProgramKey ? ERRORS.agentProgramKeyRefused : ERRORS.agentKeyInvalid);
    }
    const scopes = String(row.scopes).split(',') as AgentScope[];
    if (!scopes.includes(scope)) throw new ApiError(ERRORS.agentScopeMissing, { scope });
    await touchLastUsed(db, 'agent_keys', row.id, row.last_used_at, now());
    ctx.state.agent = { keyId: row.id, workspaceId: row.workspace_id, scopes };
    await next();
  };
}
