/**
 * `reftrack logout`: revokes the stored login token on the server that issued it
 * (POST /api/v1/cli/auth/logout), then forgets it on this machine. The local token is removed
 * whatever the server says — the person asked to log out here — but when the server could not
 * revoke it, the command says so, says how to revoke it, and exits 1: a token that still works on
 * the server is not something to be quiet about.
 */
import { BRAND } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../../cli-error.js';
import { openLoginStore, type StoredLogin } from '../../config/store.js';
import type { Context } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import { parseLogout } from '../../http/validate.js';

const LOGOUT_TIMEOUT_MS = 10_000;

type Revocation =
  | { kind: 'revoked'; revokedAt: string }
  /** The server no longer accepts the token (expired, or revoked elsewhere): nothing left to revoke. */
  | { kind: 'already_invalid'; message: string }
  | { kind: 'failed'; reason: string };

async function revokeOnServer(ctx: Context, login: StoredLogin): Promise<Revocation> {
  try {
    const res = await ctx.client(login.base_url).call('cliAuthLogout', { token: login.token, timeoutMs: LOGOUT_TIMEOUT_MS });
    return { kind: 'revoked', revokedAt: parseLogout(res.body).revoked_at };
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    if (err.status === 401) return { kind: 'already_invalid', message: err.message };
    return { kind: 'failed', reason: `${err.code}${err.status !== null ? ` (HTTP ${err.status})` : ''}: ${err.message.replace(/\.$/, '')}` };
  }
}

export async function logout(ctx: Context): Promise<void> {
  const store = await openLoginStore(ctx.env);
  const login = store.get();
  if (!login) {
    ctx.out.result({ logged_out: false, revoked_on_server: false, revoked_at: null, base_url: null, config_path: store.path }, () => 'Not logged in; nothing to remove.\n');
    return;
  }
  const revocation = await revokeOnServer(ctx, login);
  store.clear();
  const doc = {
    logged_out: true,
    revoked_on_server: revocation.kind === 'revoked',
    revoked_at: revocation.kind === 'revoked' ? revocation.revokedAt : null,
    base_url: login.base_url,
    config_path: store.path,
  };
  ctx.out.result(doc, () => {
    if (revocation.kind === 'revoked') return `Logged out of ${login.base_url}: the login token was revoked on the server and removed from ${store.path}.\n`;
    if (revocation.kind === 'already_invalid') {
      return `Logged out of ${login.base_url}: the server no longer accepted the login token (expired or already revoked), so there was nothing to revoke there; it was removed from ${store.path}.\n`;
    }
    return `Logged out on this machine only: the login token was removed from ${store.path}.\n`;
  });
  if (revocation.kind === 'failed') {
    throw new CliError({
      code: CLI_CODES.notRevoked,
      message: `The login token was NOT revoked on ${login.base_url} (${revocation.reason}). It still works there until it expires.`,
      exitCode: EXIT.failure,
      hint: `Revoke it in the dashboard: ${login.base_url}/access (CLI tokens → Revoke), signed in as ${login.account.email}. A server operator can revoke all of the account's CLI tokens with \`reftrack-server cli-tokens revoke --email ${login.account.email}\`. Running \`${BRAND.cli} logout\` again does not help: the token is no longer stored here.`,
      resultPrinted: true,
    });
  }
}
