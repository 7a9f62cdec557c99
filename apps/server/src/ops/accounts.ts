/** Operator actions on accounts: suspend (sign-in refused, live sessions stop) and restore. */
import type { Knex } from 'knex';

export class AccountOpError extends Error {}

export async function setSuspended(db: Knex, email: string, suspended: boolean): Promise<void> {
  const updated = await db('accounts').where({ email: email.toLowerCase() }).update({ suspended });
  if (updated === 0) throw new AccountOpError(`no account with e-mail ${email}`);
}
