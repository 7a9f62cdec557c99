/** First sign-in of an e-mail creates its account and a workspace it owns; a suspended account is refused. */
import type { Knex } from 'knex';
import { ERRORS, ERROR_CODES } from '@reftrack/contract';
import { ApiError } from '../http/api-error.js';
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
    const [account] = await trx('accounts').insert({ email: identity.email, name: identity.name, suspended: false, created_at: now }).returning('id');
    const [workspace] = await trx('workspaces')
      .insert({ name: `${identity.name ?? identity.email.split('@')[0]}'s workspace`, created_at: now })
      .returning('id');
    await trx('memberships').insert({ workspace_id: Number(workspace.id ?? workspace), account_id: Number(account.id ?? account), role: 'owner' });
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
