/**
 * Which account an identity signs in to (docs/accounts.md, "Identity"):
 * 1. an account already bound to the token's (issuer, subject) — whatever e-mail the token carries now,
 *    so an e-mail changed at the provider never moves anyone to another account;
 * 2. else, only when `email_verified` is the boolean true, the account with that e-mail (an account
 *    from before identities were bound, or from another issuer), which is bound now — unless it is
 *    already bound to another subject of the same issuer (the address was handed on at the provider);
 * 3. else a new account, its workspace and its binding, in one transaction.
 * A suspended account is refused.
 */
import type { Knex } from 'knex';
import { insertId } from '../db/insert-id.js';
import { ERRORS, ERROR_CODES } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { bool, isUniqueViolation } from '../db/knex.js';
import type { Identity } from '../auth/id-token.js';
import { SignInRefused } from './sign-in-refusal.js';

export interface SignedInAccount {
  id: number;
  email: string;
  name: string | null;
}

export const accountBlocked = (): ApiError => new ApiError(ERRORS.accountBlocked, {}, { code: ERROR_CODES.accountBlocked });

const bound = (db: Knex, identity: Identity) =>
  db('account_identities as i').join('accounts as a', 'a.id', 'i.account_id').where({ 'i.issuer': identity.issuer, 'i.subject': identity.subject }).first('a.id', 'a.email', 'a.name', 'a.suspended');

async function createAccount(db: Knex, identity: Identity & { email: string }, now: number): Promise<void> {
  await db.transaction(async (trx) => {
    const accountId = await insertId(trx, 'accounts', { email: identity.email, name: identity.name, suspended: false, created_at: now });
    const workspaceId = await insertId(trx, 'workspaces', { name: `${identity.name ?? identity.email.split('@')[0]}'s workspace`, created_at: now });
    await trx('memberships').insert({ workspace_id: workspaceId, account_id: accountId, role: 'owner' });
    await trx('account_identities').insert({ account_id: accountId, issuer: identity.issuer, subject: identity.subject, created_at: now });
  });
}

/** Binds an existing account found by its verified e-mail; false when it is bound to another subject of this issuer. */
async function bindByEmail(db: Knex, accountId: number, identity: Identity, now: number): Promise<boolean> {
  const other = await db('account_identities').where({ account_id: accountId, issuer: identity.issuer }).first('subject');
  if (other) return other.subject === identity.subject;
  try {
    await db('account_identities').insert({ account_id: accountId, issuer: identity.issuer, subject: identity.subject, created_at: now });
  } catch (err) {
    // A concurrent first sign-in bound it; the re-read in signIn decides.
    if (!isUniqueViolation(err)) throw err;
  }
  return true;
}

export async function signIn(db: Knex, identity: Identity, now: number): Promise<SignedInAccount> {
  let row = await bound(db, identity);
  if (!row) {
    if (!identity.email) throw new SignInRefused(ERRORS.idTokenNoEmail, 'no_email', `no usable email claim for ${identity.issuer} subject ${identity.subject}`);
    if (!identity.emailVerified) throw new SignInRefused(ERRORS.idTokenEmailUnverified, 'email_unverified', `email_verified is not true for ${identity.email} (${identity.issuer} subject ${identity.subject})`);
    const byEmail = await db('accounts').where({ email: identity.email }).first('id');
    if (byEmail) {
      if (!(await bindByEmail(db, byEmail.id, identity, now))) {
        throw new SignInRefused(ERRORS.identityConflict, 'identity_conflict', `account ${byEmail.id} (${identity.email}) is bound to another subject of ${identity.issuer}, not ${identity.subject}`);
      }
    } else {
      try {
        await createAccount(db, { ...identity, email: identity.email }, now);
      } catch (err) {
        // A concurrent first sign-in of the same identity or e-mail won; the re-read finds its account.
        if (!isUniqueViolation(err)) throw err;
        const again = await db('accounts').where({ email: identity.email }).first('id');
        if (again) await bindByEmail(db, again.id, identity, now);
      }
    }
    row = await bound(db, identity);
    if (!row) throw new SignInRefused(ERRORS.identityConflict, 'identity_conflict', `${identity.email} could not be bound to ${identity.issuer} subject ${identity.subject}`);
  }
  if (bool(row.suspended)) throw new SignInRefused(ERRORS.accountBlocked, 'account_blocked', `account ${row.id} is suspended`, { code: ERROR_CODES.accountBlocked });
  return { id: row.id, email: row.email, name: row.name ?? null };
}
