/**
 * No open sign-in in production (docs/security.md, "Sign-in"): a server that others can reach —
 * NODE_ENV=production, bound beyond loopback, or an https PUBLIC_BASE_URL — refuses to start with
 * the development identity provider (anyone signs in as anyone) unless OIDC is configured or the
 * operator opts in with ALLOW_DEV_SIGN_IN=true, which is then logged loudly at every start.
 */
import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnServer } from './helpers/cluster.js';

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-exposure-'));
let files = 0;
/** A fresh SQLite file and an encryption key, so that only the sign-in rule decides. */
const base = () => ({ DATABASE_URL: `sqlite:${path.join(dir, `${++files}.db`)}`, ENCRYPTION_KEY: randomBytes(32).toString('base64'), OIDC_ISSUER: '', OIDC_AUDIENCE: '', ALLOW_DEV_SIGN_IN: '' });
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `reftrack-server start` until it exits or 10 s pass; what it printed and how it ended. */
async function startOnce(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'start'], { env: { ...process.env, LOG_LEVEL: 'info', PORT: String(port), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 10_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, stdout, stderr };
}

describe('no open sign-in on an exposed server', () => {
  for (const [why, env] of [
    ['NODE_ENV=production', { NODE_ENV: 'production', HOST: '127.0.0.1' }],
    ['HOST=0.0.0.0', { HOST: '0.0.0.0' }],
    ['an https PUBLIC_BASE_URL', { HOST: '127.0.0.1', PUBLIC_BASE_URL: 'https://track.acme.test' }],
  ] as const) {
    it(`start refuses with one clear line when ${why} and no OIDC_ISSUER`, async () => {
      const res = await startOnce({ ...base(), ...env });
      expect(res.code).toBe(2);
      expect(res.stdout).toBe('');
      const lines = res.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^reftrack-server: refusing to start: the development sign-in .* must not run on an exposed server/);
      expect(lines[0]).toContain('OIDC_ISSUER');
      expect(lines[0]).toContain('ALLOW_DEV_SIGN_IN=true');
    });
  }

  it('ALLOW_DEV_SIGN_IN=true starts it, with an error-level warning at every start', async () => {
    const env = { ...base(), HOST: '127.0.0.1', NODE_ENV: 'production', ALLOW_DEV_SIGN_IN: 'true' };
    for (let start = 0; start < 2; start++) {
      const server = await spawnServer(env);
      try {
        expect((await fetch(`${server.url}/dev-idp/sign-in`)).status).toBe(200);
      } finally {
        await server.kill();
      }
      const warning = server.output().split('\n').find((l) => l.includes('ALLOW_DEV_SIGN_IN=true'));
      expect(warning, server.output()).toBeTruthy();
      expect(JSON.parse(warning!).level).toBe(50);
    }
  });

  it('with OIDC configured an exposed server starts, and the development sign-in is gone', async () => {
    const server = await spawnServer({ ...base(), HOST: '127.0.0.1', NODE_ENV: 'production', OIDC_ISSUER: 'https://login.acme.test', OIDC_AUDIENCE: 'reftrack' });
    try {
      expect((await fetch(`${server.url}/dev-idp/sign-in`)).status).toBe(404);
    } finally {
      await server.kill();
    }
  });

  it('a local set-up (loopback, plain http) keeps the development sign-in without any opt-in', async () => {
    const server = await spawnServer({ ...base(), HOST: '127.0.0.1' });
    try {
      expect((await fetch(`${server.url}/dev-idp/sign-in`)).status).toBe(200);
    } finally {
      await server.kill();
    }
  });

  it('`reftrack-server dev-token` is refused on an exposed configuration too', async () => {
    const run = promisify(execFile);
    const failed = await run(process.execPath, [MAIN, 'dev-token', '--email', 'a@b.test'], { env: { ...process.env, ...base(), NODE_ENV: 'production' } }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stderr).toContain('ALLOW_DEV_SIGN_IN=true');
  });
});
