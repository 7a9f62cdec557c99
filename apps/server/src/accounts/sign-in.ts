/** First sign-in of an e-mail creates its account and a workspace it owns; a suspended account is refused. */
import type { Knex } from 'knex';
import { insertId } from '../db/insert-id.js';
import { ERRORS, ERROR_CODES } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { bool, isUniqueViolation } from '../db/knex.js';
import type { Identity } from '../auth/id-token.js';

export interface SignedInAccount {
  id: number;
  email: string;
  name: string | null;
}

export const accountBlocked = (): ApiError => new ApiError(ERRORS.accountBlocked, {}, { code: ERROR_CODES.accountBlocked });

async function createAccount(db: Knex, identity: Identity, now: number): Promise<void> {
  await db.transaction(async (trx) => {
    const accountId = await insertId(trx, 'accounts', { email: identity.email, name: identity.name, suspended: false, created_at: now });
    const workspaceId = await insertId(trx, 'workspaces', { name: `${identity.name ?? identity.email.split('@')[0]}'s workspace`, created_at: now });
    await trx('memberships').insert({ workspace_id: workspaceId, account_id: accountId, role: 'owner' });
  });
}

export async function signIn(db: Knex, identity: Identity, now: number): Promise<SignedInAccount> {
  let row = await db('accounts').where({ email: identity.email }).first('id', 'email', 'name', 'suspended');
  if (!row) {
    try {
      await createAccount(db, identity, now);
    } catch (err) {
      // A concurrent first sign-in of the same e-mail created it; use that account.
      if (!isUniqueViolation(err)) throw err;
    }
    row = await db('accounts').where({ email: identity.email }).first('id', 'email', 'name', 'suspended');
  }
  if (bool(row.suspended)) throw accountBlocked();
  return { id: row.id, email: row.email, name: row.name ?? null };
}
