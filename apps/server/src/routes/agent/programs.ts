/** /api/agent/v1/programs — read and update programs of the agent key's workspace (4.8, 5.6). */
import type { Context } from 'koa';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { parseId, programInWorkspace } from '../../auth/workspace-access.js';
import { programQuery, readProgram, toProgramView } from '../../db/programs.js';
import { parseProgramUpdate } from '../../domain/program-input.js';
import { updateProgram } from '../../domain/program-update.js';

/** A program of the key's workspace; another workspace's answers 404, like a missing one. */
const ownProgram = (deps: AppDeps, ctx: Context): Promise<number> => programInWorkspace(deps.db, parseId(ctx.params.id), ctx.state.agent!.workspaceId);

export function agentListPrograms(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const rows = await programQuery(deps.db).where('p.workspace_id', ctx.state.agent!.workspaceId).orderBy('p.id');
    ctx.body = { success: true, data: rows.map(toProgramView) };
  };
}

export function agentGetProgram(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    ctx.body = { success: true, data: await readProgram(deps.db, await ownProgram(deps, ctx)) };
  };
}

export function agentUpdateProgram(deps: AppDeps) {
  return async function handleUpdate(ctx: Context): Promise<void> {
    const id = await ownProgram(deps, ctx);
    const update = parseProgramUpdate(readBody(ctx));
    await updateProgram(deps.db, id, update, deps.now(), requestActor(ctx));
    deps.links.invalidate();
    ctx.body = { success: true, data: await readProgram(deps.db, id) };
  };
}
