/**
 * CLI login tokens as their owner (dashboard, Access) and the operator see them: listed without the
 * token or its hash, revoked by setting `revoked_at` (the row stays until it expires, so the list
 * shows what was revoked and when; the pruning job removes it after expiry).
 */
import type { Knex } from 'knex';
import type { EventActor } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import type { DashboardCliToken } from '@reftrack/contract';
import { AccountOpError } from './accounts.js';

/** Newest first; more is not useful on one page, and each token needs an interactive sign-in. */
export const CLI_TOKEN_LIST_MAX = 500;

const COLUMNS = ['id', 'label', 'created_at', 'last_used_at', 'expires_at', 'revoked_at'] as const;
const iso = (ms: unknown): string | null => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

function view(row: Record<(typeof COLUMNS)[number], unknown>): DashboardCliToken {
  return {
    id: Number(row.id),
    label: (row.label as string | null) ?? null,
    created_at: iso(row.created_at)!,
    last_used_at: iso(row.last_used_at),
    expires_at: iso(row.expires_at)!,
    revoked_at: iso(row.revoked_at),
  };
}

/** The account's tokens that have not expired, revoked ones included. */
export async function listCliTokens(db: Knex, accountId: number, now: number): Promise<DashboardCliToken[]> {
  const rows = await db('cli_tokens').where({ account_id: accountId }).andWhere('expires_at', '>', now).orderBy('id', 'desc').limit(CLI_TOKEN_LIST_MAX).select(...COLUMNS);
  return rows.map(view);
}

/**
 * Revokes one of the account's own tokens; undefined when the id is not one of them (or has
 * expired). Idempotent: an already revoked token keeps its first revocation time.
 */
export async function revokeCliToken(db: Knex, accountId: number, tokenId: number, now: number, actor: EventActor): Promise<DashboardCliToken | undefined> {
  return db.transaction(async (trx) => {
    const revoked = await trx('cli_tokens').where({ id: tokenId, account_id: accountId }).whereNull('revoked_at').update({ revoked_at: now });
    if (revoked > 0) await appendEvents(trx, [{ type: 'cli_token.revoked', programId: null, data: { cli_token_id: tokenId, account_id: accountId }, occurredAt: now, actor }]);
    const row = await trx('cli_tokens').where({ id: tokenId, account_id: accountId }).andWhere('expires_at', '>', now).first(...COLUMNS);
    return row ? view(row) : undefined;
  });
}

/** Operator: every live token of the account (a lost laptop). Returns how many were revoked now. */
export async function revokeAccountCliTokens(db: Knex, email: string, now: number): Promise<number> {
  const account = await db('accounts').where({ email: email.toLowerCase() }).first('id');
  if (!account) throw new AccountOpError(`no account with e-mail ${email}`);
  return db('cli_tokens').where({ account_id: account.id }).whereNull('revoked_at').andWhere('expires_at', '>', now).update({ revoked_at: now });
}

/** Operator: the account's tokens, as the dashboard lists them. */
export async function listAccountCliTokens(db: Knex, email: string, now: number): Promise<DashboardCliToken[]> {
  const account = await db('accounts').where({ email: email.toLowerCase() }).first('id');
  if (!account) throw new AccountOpError(`no account with e-mail ${email}`);
  return listCliTokens(db, account.id, now);
}
