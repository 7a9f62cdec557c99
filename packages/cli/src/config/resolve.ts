/** Where requests go and with which program key: flags first, then the environment, then the stored login. */
import { BRAND } from '@reftrack/contract';
import { usageError, CliError, CLI_CODES } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import type { StoredLogin } from './store.js';

export const DEFAULT_BASE_URL = 'http://localhost:8787';

/** Normalises and checks a server address; a bad one is a usage error (exit 2). */
export function checkBaseUrl(value: string, source: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw usageError(`${source} is not a valid URL: "${value}".`, 'Pass the server address, e.g. --base-url https://track.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`${source} must use http or https, got "${url.protocol}".`);
  if (url.search || url.hash || url.username || url.password) throw usageError(`${source} must not contain a query, fragment or credentials: "${value}".`);
  return url.href.replace(/\/+$/, '');
}

export interface BaseUrlSources {
  flag?: string;
  env?: NodeJS.ProcessEnv;
  login?: StoredLogin | null;
}

export function resolveBaseUrl({ flag, env = process.env, login }: BaseUrlSources): string {
  if (flag !== undefined) return checkBaseUrl(flag, '--base-url');
  if (env.REFTRACK_BASE_URL) return checkBaseUrl(env.REFTRACK_BASE_URL, 'REFTRACK_BASE_URL');
  if (login) return login.base_url;
  return DEFAULT_BASE_URL;
}

/** True when a command reaches a server address without the stored login's help. */
export function baseUrlNeedsLogin(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  return flag === undefined && !env.REFTRACK_BASE_URL;
}

export function resolveApiKey(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const key = (flag ?? env.REFTRACK_API_KEY ?? '').trim();
  if (key === '') {
    throw new CliError({
      code: CLI_CODES.missingApiKey,
      message: 'No program key: pass --api-key or set REFTRACK_API_KEY.',
      exitCode: EXIT.auth,
      hint: `A workspace owner generates the program key (aff_...) with \`${BRAND.cli} keys generate <program id>\` or in the dashboard (Program settings → API key). Prefer REFTRACK_API_KEY: a flag is visible in the shell history and the process list.`,
    });
  }
  if (/\s/.test(key)) throw usageError('The program key must not contain spaces or line breaks.', 'Copy the key again, without surrounding text.');
  return key;
}

/** The stored login, but only for the server it was issued by: a token is never sent elsewhere. */
export function requireLogin(login: StoredLogin | null, baseUrl: string, loginRequiredMessage: string): StoredLogin {
  if (!login) {
    throw new CliError({ code: CLI_CODES.notLoggedIn, message: loginRequiredMessage, exitCode: EXIT.auth, hint: `Run \`${BRAND.cli} login --base-url ${baseUrl}\`.` });
  }
  if (login.base_url !== baseUrl) {
    throw new CliError({
      code: CLI_CODES.loginServerMismatch,
      message: `You are logged in to ${login.base_url}, but this command targets ${baseUrl}.`,
      exitCode: EXIT.auth,
      hint: `Run \`${BRAND.cli} login --base-url ${baseUrl}\`, or drop --base-url / REFTRACK_BASE_URL to use ${login.base_url}.`,
    });
  }
  return login;
}
