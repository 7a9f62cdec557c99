/**
 * The previous release's server, checked out from git into a temporary worktree and built, for the
 * rolling-upgrade test (docs/operator.md, "Upgrades").
 *
 * Which commit is "the previous release": REFTRACK_PREVIOUS_RELEASE when set (any git ref);
 * otherwise the first parent of the newest commit on HEAD's first-parent history that changed
 * `apps/server/migrations`. That is the last state of the branch before its newest schema change:
 * exactly the server an operator is still running while the new release's `migrate` has already
 * run. On main, the commit found is the merge that brought the newest migration, and its first
 * parent is main before that merge. It needs the history (CI's clean clone has all of it; a shallow
 * clone fails with a message saying so).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SERVER_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface PreviousRelease {
  /** The commit checked out, and how it was chosen. */
  commit: string;
  subject: string;
  /** `dist/main.js` of its server. */
  main: string;
  /** Its migration files: the ones this release has and it lacks are the schema change under test. */
  migrations: string[];
  /** Seconds spent checking out, installing and building. */
  preparedInSeconds: number;
  remove(): Promise<void>;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
}

export async function resolvePreviousRelease(repo: string): Promise<string> {
  const chosen = process.env.REFTRACK_PREVIOUS_RELEASE;
  if (chosen) return git(repo, 'rev-parse', '--verify', `${chosen}^{commit}`);
  const newest = await git(repo, 'log', '--first-parent', '-1', '--format=%H', 'HEAD', '--', 'apps/server/migrations');
  if (!newest) throw new Error('no commit on HEAD changed apps/server/migrations: is this a shallow clone? (git fetch --unshallow, or set REFTRACK_PREVIOUS_RELEASE)');
  try {
    return await git(repo, 'rev-parse', '--verify', `${newest}^1`);
  } catch {
    throw new Error(`the parent of ${newest.slice(0, 12)} is not in this clone: fetch the full history (git fetch --unshallow) or set REFTRACK_PREVIOUS_RELEASE`);
  }
}

/**
 * Checks the previous release out into a temporary worktree (detached, so no branch is created),
 * installs its dependencies from the warm pnpm store and builds what its server needs: the contract
 * (imported at run time) and the server bundle. The dashboard's web build is left out: the test
 * reads the dashboard API, and a server without the web build answers its pages with 404.
 */
export async function preparePreviousRelease(): Promise<PreviousRelease> {
  const started = process.hrtime.bigint();
  const repo = await git(SERVER_DIR, 'rev-parse', '--show-toplevel');
  const commit = await resolvePreviousRelease(repo);
  const subject = await git(repo, 'log', '-1', '--format=%s', commit);
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-previous-'));
  const dir = path.join(parent, 'release');
  await git(repo, 'worktree', 'add', '--detach', dir, commit);
  const remove = async (): Promise<void> => {
    await git(repo, 'worktree', 'remove', '--force', dir).catch(() => undefined);
    fs.rmSync(parent, { recursive: true, force: true });
    await git(repo, 'worktree', 'prune').catch(() => undefined);
  };
  try {
    const pnpm = (...args: string[]) => run('pnpm', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, CI: 'true' } });
    await pnpm('install', '--frozen-lockfile', '--prefer-offline', '--filter', '@reftrack/server...');
    await pnpm('--filter', '@reftrack/contract', '--filter', '@reftrack/server', 'run', 'build');
    const main = path.join(dir, 'apps', 'server', 'dist', 'main.js');
    if (!fs.existsSync(main)) throw new Error(`the build of ${commit.slice(0, 12)} left no ${main}`);
    const migrations = fs.readdirSync(path.join(dir, 'apps', 'server', 'migrations')).filter((f) => /^\d{14}_.+\.js$/.test(f)).sort();
    return { commit, subject, main, migrations, preparedInSeconds: Number(process.hrtime.bigint() - started) / 1e9, remove };
  } catch (err) {
    await remove();
    throw err;
  }
}
