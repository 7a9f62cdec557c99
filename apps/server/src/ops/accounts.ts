/** Operator actions on accounts: suspend (sign-in refused, live sessions stop) and restore. */
import type { Knex } from 'knex';
import { appendEvents } from '../db/outbox.js';
import { operatorActor } from '../auth/actor.js';

export class AccountOpError extends Error {}

/** Writes `account.suspended` or `account.restored` (the audit log of each workspace the account belongs to). */
export async function setSuspended(db: Knex, email: string, suspended: boolean, now = Date.now()): Promise<void> {
  await db.transaction(async (trx) => {
    const account = await trx('accounts').where({ email: email.toLowerCase() }).first('id', 'email');
    if (!account) throw new AccountOpError(`no account with e-mail ${email}`);
    await trx('accounts').where({ id: account.id }).update({ suspended });
    const data = { account_id: Number(account.id), email: String(account.email) };
    await appendEvents(trx, [{ type: suspended ? 'account.suspended' : 'account.restored', programId: null, data, occurredAt: now, actor: operatorActor() }]);
  });
}
