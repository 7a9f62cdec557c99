/** Membership and permission checks: every dashboard route asks here before touching a program. */
import type { Knex } from 'knex';
import { ERRORS, ROLE_PERMISSIONS, type ErrorSpec, type Permission, type Role } from '@reftrack/contract';
import { ApiError, fail } from '../api-error.js';

export async function roleIn(db: Knex, accountId: number, workspaceId: number | null): Promise<Role | undefined> {
  if (workspaceId === null) return undefined;
  const row = await db('memberships').where({ account_id: accountId, workspace_id: workspaceId }).first('role');
  return row?.role as Role | undefined;
}

export function can(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}

export function demand(role: Role, permission: Permission): void {
  if (!can(role, permission)) throw new ApiError(permission === 'keys:manage' ? ERRORS.ownerRequired : ERRORS.permissionDenied, { permission });
}

/**
 * The caller's role in a workspace, which must allow `permission`. A workspace the caller does not
 * belong to (or none at all) answers `notFound`, like a missing one.
 */
export async function workspaceWithRole(db: Knex, accountId: number, workspaceId: number | undefined, permission: Permission, notFound: ErrorSpec = ERRORS.workspaceNotFound): Promise<{ workspaceId: number; role: Role }> {
  const role = workspaceId === undefined ? undefined : await roleIn(db, accountId, workspaceId);
  if (workspaceId === undefined || !role) fail(notFound);
  demand(role, permission);
  return { workspaceId, role };
}

export function parseId(value: unknown, error = ERRORS.programNotFound): number {
  const s = String(value ?? '');
  if (!/^\d{1,15}$/.test(s) || Number(s) < 1) fail(error);
  return Number(s);
}

/**
 * The program and the caller's role in its workspace. A program of a workspace the caller does not
 * belong to answers 404, exactly like a missing one, so its existence is not revealed.
 */
export async function programWithRole(db: Knex, accountId: number, programId: number, permission: Permission): Promise<{ workspaceId: number; role: Role }> {
  const program = await db('programs').where({ id: programId }).first('id', 'workspace_id');
  const role = program ? await roleIn(db, accountId, program.workspace_id) : undefined;
  if (!program || !role) fail(ERRORS.programNotFound);
  demand(role, permission);
  return { workspaceId: program.workspace_id, role };
}

/**
 * A program of `workspaceId` (an agent key's workspace): its id. A program of another workspace
 * answers 404, exactly like a missing one.
 */
export async function programInWorkspace(db: Knex, programId: number, workspaceId: number): Promise<number> {
  const row = await db('programs').where({ id: programId, workspace_id: workspaceId }).first('id');
  if (!row) fail(ERRORS.programNotFound);
  return programId;
}
