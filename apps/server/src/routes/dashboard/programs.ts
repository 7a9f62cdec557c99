/** /api/dashboard/programs — list, create, read, update (2.1), readiness (4.5) for signed-in members. */
import type { Context } from 'koa';
import { ERRORS, type DashboardProgram } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { demand, parseId, programWithRole, roleIn } from '../../auth/workspace-access.js';
import { createProgram, programQuery, readProgram, toProgramView } from '../../db/programs.js';
import { parseNewProgram, parseProgramUpdate } from '../../domain/program-input.js';
import { updateProgram } from '../../domain/program-update.js';
import { computeReadiness } from '../../domain/readiness.js';

export function listPrograms(deps: AppDeps) {
  return async function handleList(ctx: Context): Promise<void> {
    const rows = await programQuery(deps.db)
      .join('memberships as m', 'm.workspace_id', 'p.workspace_id')
      .where('m.account_id', ctx.state.account!.accountId)
      .select('m.role')
      .orderBy('p.id');
    ctx.body = { success: true, data: rows.map((r): DashboardProgram => ({ ...toProgramView(r), role: r.role })) };
  };
}

export function createDashboardProgram(deps: AppDeps) {
  return async function handleCreate(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    const accountId = ctx.state.account!.accountId;
    let workspaceId: number;
    if (body.workspace_id !== undefined) {
      workspaceId = parseId(body.workspace_id, ERRORS.workspaceNotFound);
    } else {
      const owned = await deps.db('memberships').where({ account_id: accountId, role: 'owner' }).orderBy('workspace_id').first('workspace_id');
      if (!owned) fail(ERRORS.permissionDenied, { permission: 'programs:write' });
      workspaceId = owned.workspace_id;
    }
    const role = await roleIn(deps.db, accountId, workspaceId);
    if (!role) fail(ERRORS.workspaceNotFound);
    demand(role, 'programs:write');
    const program = await createProgram(deps.db, workspaceId, parseNewProgram(body), deps.now(), requestActor(ctx));
    ctx.status = 201;
    ctx.body = { success: true, data: program };
  };
}

export function getDashboardProgram(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    const { role } = await programWithRole(deps.db, ctx.state.account!.accountId, id, 'programs:read');
    const data: DashboardProgram = { ...(await readProgram(deps.db, id))!, role };
    ctx.body = { success: true, data };
  };
}

export function updateDashboardProgram(deps: AppDeps) {
  return async function handleUpdate(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'programs:write');
    const update = parseProgramUpdate(readBody(ctx));
    await updateProgram(deps.db, id, update, deps.now(), requestActor(ctx));
    // The click route caches the attribution window with each link.
    deps.links.invalidate();
    ctx.body = { success: true, data: await readProgram(deps.db, id) };
  };
}

export function dashboardReadiness(deps: AppDeps) {
  return async function handleReadiness(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'programs:read');
    const key = await deps.db('program_keys').where({ program_id: id }).first('id', 'rotation_marked_at', 'rotation_deadline');
    const data = await computeReadiness(
      deps.db,
      { keyId: key?.id ?? 0, programId: id, rotationMarkedAt: key?.rotation_marked_at ?? null, rotationDeadline: key?.rotation_deadline ?? null },
      deps.now(),
    );
    ctx.body = { success: true, data };
  };
}
