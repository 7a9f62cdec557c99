/** CLI login tokens (5.7): issued once by the login flow, stored hashed, used on `init` and `programs`. */
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ERRORS, type ErrorSpec } from '@reftrack/contract';
import { ApiError } from '../http/api-error.js';
import { bool, type Db } from '../db/knex.js';
import { parseBearer } from './bearer.js';
import { sha256Hex } from './secret-hash.js';
import { accountBlocked } from '../accounts/sign-in.js';

const TOKEN_DAYS = 90;

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

export async function issueLoginToken(db: Db, accountId: number, now: number): Promise<string> {
  const token = 'rtl_' + randomBytes(32).toString('base64url');
  await db('cli_tokens').insert({ token_hash: sha256Hex(token), account_id: accountId, created_at: now, expires_at: now + TOKEN_DAYS * 86_400_000 });
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
  const row = await db('cli_tokens').where({ token_hash: sha256Hex(parsed.token) }).first('account_id', 'expires_at');
  if (!row || Number(row.expires_at) <= now) throw new ApiError(errors.invalid);
  const account = await db('accounts').where({ id: row.account_id }).first('id', 'email', 'name', 'suspended');
  if (!account) throw new ApiError(errors.userNotFound);
  if (bool(account.suspended)) throw accountBlocked();
  return { id: account.id, email: account.email, name: account.name ?? null };
}
