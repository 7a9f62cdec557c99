/**
 * Access: the signed-in account's CLI login tokens (each person manages their own — a token is the
 * account's, across all its workspaces, so no workspace owner may cut it), and a workspace's agent
 * keys (owners: `agent_keys:manage`). Lists never carry a token, a key or a hash.
 *
 *   GET  /api/dashboard/cli-tokens                   the account's unexpired tokens
 *   POST /api/dashboard/cli-tokens/:id/revoke        revoke one of them (idempotent)
 *   GET  /api/dashboard/workspaces/:id/agent-keys    the workspace's agent keys (owner)
 *   POST /api/dashboard/agent-keys/:id/revoke        revoke one (owner of its workspace; idempotent)
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { parseId, workspaceWithRole } from '../../auth/workspace-access.js';
import { listCliTokens, revokeCliToken } from '../../ops/cli-tokens.js';
import { agentKeyWorkspace, listAgentKeys, revokeAgentKey } from '../../ops/agent-keys.js';

export function listOwnCliTokens(deps: AppDeps) {
  return async function handleListCliTokens(ctx: Context): Promise<void> {
    ctx.body = { success: true, data: await listCliTokens(deps.db, ctx.state.account!.accountId, deps.now()) };
  };
}

export function revokeOwnCliToken(deps: AppDeps) {
  return async function handleRevokeCliToken(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id, ERRORS.cliTokenNotFound);
    // Another account's token answers 404 like a missing one, so ids reveal nothing.
    const token = await revokeCliToken(deps.db, ctx.state.account!.accountId, id, deps.now(), requestActor(ctx));
    if (!token) fail(ERRORS.cliTokenNotFound);
    ctx.body = { success: true, data: token };
  };
}

export function listWorkspaceAgentKeys(deps: AppDeps) {
  return async function handleListAgentKeys(ctx: Context): Promise<void> {
    const { workspaceId } = await workspaceWithRole(deps.db, ctx.state.account!.accountId, parseId(ctx.params.id, ERRORS.workspaceNotFound), 'agent_keys:manage');
    ctx.body = { success: true, data: await listAgentKeys(deps.db, workspaceId) };
  };
}

export function revokeWorkspaceAgentKey(deps: AppDeps) {
  return async function handleRevokeAgentKey(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id, ERRORS.agentKeyNotFound);
    await workspaceWithRole(deps.db, ctx.state.account!.accountId, await agentKeyWorkspace(deps.db, id), 'agent_keys:manage', ERRORS.agentKeyNotFound);
    const key = await revokeAgentKey(deps.db, id, deps.now(), requestActor(ctx));
    if (!key) fail(ERRORS.agentKeyNotFound);
    ctx.body = { success: true, data: key };
  };
}
