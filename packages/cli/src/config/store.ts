/**
 * The stored login: one token, the account it belongs to and the server that issued it. The file
 * holds a credential, so it is readable by its owner only (0600) and checked after every write.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BRAND } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';

export interface StoredLogin {
  token: string;
  account: { email: string; name: string | null };
  /** The server that issued the token; the token is sent nowhere else. */
  base_url: string;
  logged_in_at: string;
}

interface StoreShape {
  login?: StoredLogin;
}

export const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIR_MODE = 0o700;
// POSIX permission bits do not exist on Windows; there the file inherits the profile's ACL.
const POSIX = process.platform !== 'win32';

export interface LoginStore {
  readonly path: string;
  get(): StoredLogin | null;
  set(login: StoredLogin): void;
  /** Returns whether a login was stored. */
  clear(): boolean;
}

/** Makes the file 0600 when it is not, and fails loudly when that is impossible. */
export function ensurePrivate(file: string): void {
  if (!POSIX || !fs.existsSync(file)) return;
  if ((fs.statSync(file).mode & 0o777) !== PRIVATE_FILE_MODE) fs.chmodSync(file, PRIVATE_FILE_MODE);
  const mode = fs.statSync(file).mode & 0o777;
  if (mode !== PRIVATE_FILE_MODE) {
    throw new CliError({
      code: CLI_CODES.configPermissions,
      message: `Could not make ${file} readable by its owner only (mode is ${mode.toString(8)}).`,
      exitCode: EXIT.failure,
      hint: 'Fix the permissions (chmod 600) or set REFTRACK_CONFIG_DIR to a directory you own.',
    });
  }
}

function isLogin(value: unknown): value is StoredLogin {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const account = v.account as Record<string, unknown> | null | undefined;
  return (
    typeof v.token === 'string' &&
    v.token !== '' &&
    typeof v.base_url === 'string' &&
    typeof v.logged_in_at === 'string' &&
    typeof account === 'object' &&
    account !== null &&
    typeof account.email === 'string'
  );
}

/**
 * Opens the store. conf is imported here, not at the top of the bundle, so that commands which
 * never touch the login (and `--help`) do not pay for loading it.
 */
export async function openLoginStore(env: NodeJS.ProcessEnv = process.env): Promise<LoginStore> {
  const { default: Conf } = await import('conf');
  const dir = env.REFTRACK_CONFIG_DIR;
  if (dir) fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const conf = new Conf<StoreShape>({
    projectName: BRAND.cli,
    projectSuffix: '',
    ...(dir ? { cwd: dir } : {}),
    configFileMode: PRIVATE_FILE_MODE,
    // A hand-edited, broken file must not lock the person out of `reftrack login`.
    clearInvalidConfig: true,
  });
  if (!dir) {
    // The default folder (~/.config/reftrack) is ours alone; a folder named by the person is theirs.
    const own = path.dirname(conf.path);
    if (POSIX && (fs.statSync(own).mode & 0o077) !== 0) fs.chmodSync(own, PRIVATE_DIR_MODE);
  }
  ensurePrivate(conf.path);

  return {
    path: conf.path,
    get() {
      const login: unknown = conf.get('login');
      return isLogin(login) ? login : null;
    },
    set(login) {
      conf.set('login', login);
      ensurePrivate(conf.path);
    },
    clear() {
      const had = conf.has('login');
      conf.delete('login');
      ensurePrivate(conf.path);
      return had;
    },
  };
}
