/** What the signed-in person may do in a program, from the contract's role table. */
import { ROLE_PERMISSIONS, type Permission, type Role } from '@reftrack/contract';

export function can(role: Role | undefined, permission: Permission): boolean {
  return role !== undefined && ROLE_PERMISSIONS[role].includes(permission);
}

export const ROLE_LABELS: Record<Role, string> = { owner: 'Owner', member: 'Member', restricted: 'Restricted' };
