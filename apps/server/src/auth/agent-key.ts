/** Agent keys (5.6): `agt_` keys for approved tools, scoped to one workspace, stored as hashes. */
import type { Context, Next } from 'koa';
import { AGENT_SCOPES, BRAND, ERRORS, type AgentScope } from '@reftrack/contract';
import { ApiError } from '../http/api-error.js';
import type { Db } from '../db/knex.js';
import { parseBearer } from './bearer.js';
import { hashesEqual, sha256Hex } from './secret-hash.js';
import { newAgentKey } from '../domain/ids.js';

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
  await db('agent_keys').insert({ workspace_id: workspaceId, key_hash: sha256Hex(key), key_last4: key.slice(-4), name, scopes: [...new Set(scopes)].join(','), created_at: now });
  return key;
}

/** Authenticates the agent key; a program key is refused (5.6), as is a key lacking `scope`. */
export function requireAgentScope(db: Db, scope: AgentScope) {
  return async function agentGate(ctx: Context, next: Next): Promise<void> {
    const parsed = parseBearer(ctx.get('authorization') || undefined);
    if (parsed.kind !== 'token') throw new ApiError(ERRORS.agentKeyMalformed);
    const hash = sha256Hex(parsed.token);
    const row = await db('agent_keys').where({ key_hash: hash }).whereNull('revoked_at').first('id', 'workspace_id', 'scopes', 'key_hash');
    if (!row || !hashesEqual(row.key_hash, hash)) {
      const isProgramKey = parsed.token.startsWith(BRAND.programKeyPrefix) || Boolean(await db('program_keys').where({ key_hash: hash }).first('id'));
      throw new ApiError(isProgramKey ? ERRORS.agentProgramKeyRefused : ERRORS.agentKeyInvalid);
    }
    const scopes = String(row.scopes).split(',') as AgentScope[];
    if (!scopes.includes(scope)) throw new ApiError(ERRORS.agentScopeMissing, { scope });
    ctx.state.agent = { keyId: row.id, workspaceId: row.workspace_id, scopes };
    await next();
  };
}
