/**
 * The real Reftrack server for the browser end-to-end suites (packages/tracker, apps/web): the
 * built `apps/server/dist/main.js`, seeded with a fixture on a fresh SQLite file, started on a free
 * port and awaited until `GET /healthz` answers. Node built-ins only, so any package's tests can
 * import it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
export const serverMain = join(repoRoot, 'apps/server/dist/main.js');
export const CHROMIUM = '/usr/bin/chromium';
/** Flags Chromium needs on this machine kind: no sandbox as root, no network beyond the test's. */
/**
 * The visitor of the e2e tests is a person: headless Chromium's own user agent says HeadlessChrome,
 * which the server's bot detection (isbot, docs/analytics.md) rightly takes for a bot, whose clicks
 * attribute nothing. So the browser presents the user agent of the same Chrome with a screen.
 */
export const E2E_BROWSER_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
export const CHROMIUM_ARGS = [`--user-agent=${E2E_BROWSER_USER_AGENT}`, '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-quic', '--no-first-run', '--disable-sync'];

const HEALTHZ_WAIT_MS = 20_000;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

export interface StartOptions {
  /** The seed fixture (`reftrack-server seed --file`); none: an empty database. */
  fixture?: string;
  /** Arguments after `start` (e.g. `--demo`). */
  startArgs?: string[];
  /** Prefix of the temporary directory holding the database. */
  tmpPrefix: string;
  /** The origin the server calls itself (PUBLIC_BASE_URL), from its port. */
  origin?: (port: number) => string;
  /** Variables to set, or (undefined) to remove from the inherited environment. */
  env?: Record<string, string | undefined>;
}

export interface ReftrackServer {
  port: number;
  origin: string;
  env: NodeJS.ProcessEnv;
  /** `reftrack-server <args>` on the same database; its standard output. */
  command: (...args: string[]) => string;
  /** Everything the server printed so far (since the last restart). */
  output: () => string;
  /** Stops the server and starts it again on the same database, with these arguments after `start`. */
  restart: (...startArgs: string[]) => Promise<void>;
  stop: () => Promise<void>;
}

/** Seeds a fresh SQLite database with the fixture, then runs `reftrack-server start` on it. */
export async function startReftrackServer(options: StartOptions): Promise<ReftrackServer> {
  if (!existsSync(serverMain)) throw new Error(`${serverMain} is missing: build the server first (pnpm --filter @reftrack/server build)`);
  const dir = mkdtempSync(join(tmpdir(), options.tmpPrefix));
  const port = await freePort();
  const origin = options.origin?.(port) ?? `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: `sqlite:${join(dir, 'reftrack.db')}`,
    PUBLIC_BASE_URL: origin,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const command = (...args: string[]) => execFileSync(process.execPath, [serverMain, ...args], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (options.fixture) command('seed', '--file', options.fixture);
  let child: ChildProcess;
  let out = '';
  const halt = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  };
  const stop = async () => {
    await halt();
    rmSync(dir, { recursive: true, force: true });
  };
  const launch = async (startArgs: string[]) => {
    out = '';
    // The working folder is the temporary one: nothing the server writes lands in the repository.
    child = spawn(process.execPath, [serverMain, 'start', ...startArgs], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const deadline = Date.now() + HEALTHZ_WAIT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`reftrack server exited with ${child.exitCode}:\n${out}`);
      if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`reftrack server did not answer /healthz within ${HEALTHZ_WAIT_MS / 1000} s:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await launch(options.startArgs ?? []);
  const restart = async (...startArgs: string[]) => {
    await halt();
    await launch(startArgs);
  };
  return { port, origin, env, command, output: () => out, restart, stop };
}
