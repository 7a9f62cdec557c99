/**
 * CLI login tokens (5.7): issued once by the login flow, stored hashed, used on `init` and
 * `programs`; revoked by `reftrack logout`, the dashboard (Access) or the operator. Nothing caches
 * a token: every request reads its row, so a revocation holds on every process at once.
 */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { bool, type Db } from '../db/knex.js';
import { parseBearer } from './bearer.js';
import { sha256Hex } from './secret-hash.js';
import { accountBlocked } from '../accounts/sign-in.js';
import { touchLastUsed } from './last-used.js';

const TOKEN_DAYS = 90;
/** The label kept to recognise a token: the User-Agent of the CLI that received it, cut to this. */
export const LOGIN_TOKEN_LABEL_MAX = 200;

export interface LoginTokenErrors {
  missing: ErrorSpec;
  invalid: ErrorSpec;
  userNotFound: ErrorSpec;
}

/** `init` and `programs` word the same three failures differently (7.6). */
export const LOGIN_TOKEN_ERRORS = {
  init: { missing: ERRORS.cliInitAuthRequired, invalid: ERRORS.cliInitInvalidToken, userNotFound: ERRORS.cliInitUserNotFound },
  programs: { missing: ERRORS.cliProgramsMissingAuth, invalid: ERRORS.cliProgramsInvalidToken, userNotFound: ERRORS.cliProgramsUserNotFound },
} satisfies Record<string, LoginTokenErrors>;

/** `userAgent`: of the poll that receives the token, so that a person can tell their tokens apart. */
export async function issueLoginToken(db: Db, accountId: number, now: number, userAgent?: string): Promise<string> {
  const token = 'rtl_' + randomBytes(32).toString('base64url');
  // Printable ASCII only: the label is shown back in the dashboard and in the operator's terminal.
  const label = (userAgent ?? '').replace(/[^\x20-\x7e]/g, '').trim().slice(0, LOGIN_TOKEN_LABEL_MAX) || null;
  await db('cli_tokens').insert({ token_hash: sha256Hex(token), account_id: accountId, created_at: now, expires_at: now + TOKEN_DAYS * 86_400_000, label });
  return token;
}

export interface LoginAccount {
  id: number;
  email: string;
  name: string | null;
}

export async function authenticateLoginToken(ctx: Context, db: Db, errors: LoginTokenErrors, now: number): Promise<LoginAccount> {
  const parsed = parseBearer(ctx.get('authorization') || undefined);
  if (parsed.kind !== 'token') throw new ApiError(errors.missing);
  const row = await db('cli_tokens').where({ token_hash: sha256Hex(parsed.token) }).first('id', 'account_id', 'expires_at', 'revoked_at', 'last_used_at');
  // A revoked token is refused exactly like an expired one (7.6 has one message for both).
  if (!row || Number(row.expires_at) <= now || row.revoked_at !== null) throw new ApiError(errors.invalid);
  const account = await db('accounts').where({ id: row.account_id }).first('id', 'email', 'name', 'suspended');
  if (!account) throw new ApiError(errors.userNotFound);
  if (bool(account.suspended)) throw accountBlocked();
  await touchLastUsed(db, 'cli_tokens', row.id, row.last_used_at, now);
  return { id: account.id, email: account.email, name: account.name ?? null };
}

/**
 * Revokes the login token sent as Bearer (`reftrack logout`). Idempotent: a token already revoked
 * answers with its revocation time. An expired or unknown token has nothing to revoke (401). The
 * account's state does not matter: a suspended account may still give up its token.
 */
export async function revokeBearerLoginToken(ctx: Context, db: Db, now: number): Promise<{ revokedAt: number }> {
  const parsed = parseBearer(ctx.get('authorization') || undefined);
  if (parsed.kind !== 'token') throw new ApiError(ERRORS.cliLogoutMissingAuth);
  const hash = sha256Hex(parsed.token);
  // One conditional UPDATE: of concurrent logouts (on any process) one sets the time, the rest read it.
  await db('cli_tokens').where({ token_hash: hash }).whereNull('revoked_at').andWhere('expires_at', '>', now).update({ revoked_at: now });
  const row = await db('cli_tokens').where({ token_hash: hash }).first('revoked_at');
  if (!row || row.revoked_at === null) throw new ApiError(ERRORS.cliLogoutInvalidToken);
  return { revokedAt: Number(row.revoked_at) };
}
