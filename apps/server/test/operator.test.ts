import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { baseFixture } from './helpers/fixture.js';

const run = promisify(execFile);
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

let s: TestServer;
let databaseUrl: string;
let fixtureFile: string;

/** The operator command, run as a separate process against the test server's database. */
async function operator(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

/**
 * Asks until `check` holds, for at most a second: the spec gives a change made by the operator
 * command a second to reach a running server (its key cache keeps a key for half of one).
 */
async function withinASecond<T>(ask: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 1000;
  for (;;) {
    const value = await ask();
    if (check(value) || Date.now() >= deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  s = await startTestServer();
  const cfg = s.running.deps.config.database;
  databaseUrl = cfg.client === 'sqlite' ? `sqlite:${cfg.filename}` : `${cfg.connectionString}${cfg.connectionString.includes('?') ? '&' : '?'}schema=${cfg.schema}`;
  fixtureFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-fixture-')), 'fixture.json');
  fs.writeFileSync(fixtureFile, JSON.stringify(baseFixture()));
});
afterAll(() => s?.close());

describe(`[${dbKind}] reftrack-server operator command`, () => {
  it('seed --file loads the fixture twice without duplicating anything', async () => {
    const count = async () => Promise.all(['accounts', 'workspaces', 'memberships', 'programs', 'program_keys', 'partners', 'partner_programs', 'referral_links'].map(async (t) => Number((await s.db(t).count({ n: '*' }).first())!.n)));
    const before = await count();
    expect((await operator('seed', '--file', fixtureFile)).code).toBe(0);
    expect((await operator('seed', '--file', fixtureFile)).code).toBe(0);
    expect(await count()).toEqual(before);
  });

  it('seed --demo prints a program key and a test link that work', async () => {
    const out = await operator('seed', '--demo');
    expect(out.code).toBe(0);
    const key = /aff_[0-9A-Za-z]+/.exec(out.stdout)?.[0];
    const link = /https?:\/\/\S+\?aff=\S+/.exec(out.stdout)?.[0];
    expect(key && link).toBeTruthy();
    expect((await s.post('/api/v1/track/click', { affiliate_url: link })).status).toBe(200);
    expect((await s.get('/api/v1/programs/me/readiness', bearer(key!))).status).toBe(200);
  });

  it('keys mark-rotation takes effect on the running server within a second', async () => {
    const deadline = new Date(Date.now() + 7 * 86_400_000).toISOString();
    expect((await s.get('/api/v1/programs/me/readiness', bearer(KEY1))).status).toBe(200);
    expect((await operator('keys', 'mark-rotation', '--program', '1', '--deadline', deadline)).code).toBe(0);
    const res = await withinASecond(
      () => s.get('/api/v1/programs/me/readiness', bearer(KEY1)),
      (r) => r.headers.get('sunset') !== null,
    );
    expect(res.headers.get('sunset')).toBe(new Date(deadline).toUTCString());
    expect(res.body.warnings[0].rotate_by).toBe(deadline);
  });

  it('keys regenerate prints the new key once; the old key stops within a second', async () => {
    expect((await s.get('/api/v1/programs/me/readiness', bearer(KEY1))).status).toBe(200);
    const out = await operator('keys', 'regenerate', '--program', '1');
    const fresh = out.stdout.trim();
    expect(fresh).toMatch(/^aff_[0-9A-Za-z]{32,}$/);
    const old = await withinASecond(
      () => s.get('/api/v1/programs/me/readiness', bearer(KEY1)),
      (r) => r.status === 401,
    );
    expect(old.status).toBe(401);
    const ok = await s.get('/api/v1/programs/me/readiness', bearer(fresh));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('sunset')).toBeNull();
  });

  it('refuses bad arguments with a clear line and a usage exit code', async () => {
    const bad = await operator('keys', 'mark-rotation', '--program', 'x', '--deadline', 'soon');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('positive integer');
    const missing = await operator('keys', 'regenerate', '--program', '999');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('program 999 not found');
  });

  it('dev-token prints an id_token the running server accepts', async () => {
    const out = await operator('dev-token', '--email', 'owner@acme.test');
    expect(out.code).toBe(0);
    const res = await s.post('/api/dashboard/session', { id_token: out.stdout.trim() });
    expect(res.status).toBe(200);
    expect(res.body.data.account.email).toBe('owner@acme.test');
  });

  it('accounts suspend refuses sign-in at once; restore allows it again', async () => {
    expect((await operator('accounts', 'suspend', '--email', 'owner@acme.test')).code).toBe(0);
    const token = (await operator('dev-token', '--email', 'owner@acme.test')).stdout.trim();
    expect((await s.post('/api/dashboard/session', { id_token: token })).body.error.details).toEqual({ code: 'ACCOUNT_BLOCKED' });
    expect((await operator('accounts', 'restore', '--email', 'owner@acme.test')).code).toBe(0);
    expect((await s.post('/api/dashboard/session', { id_token: token })).status).toBe(200);
    expect((await operator('accounts', 'suspend', '--email', 'nobody@x.test')).code).toBe(2);
  });

  it('agent-keys create prints an agt_ key once, scoped to the workspace', async () => {
    const out = await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read');
    const key = out.stdout.trim();
    expect(key).toMatch(/^agt_[0-9A-Za-z]{32,}$/);
    expect((await s.get('/api/agent/v1/programs', bearer(key))).status).toBe(200);
    const bad = await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'everything');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown: everything');
  });

  it('an invalid DATABASE_URL stops with one clear line', async () => {
    const { stderr, code } = await run(process.execPath, [MAIN, 'migrate'], { env: { ...process.env, DATABASE_URL: 'mysql://x' } }).then(
      (r) => ({ ...r, code: 0 }),
      (e: { stderr: string; code: number }) => e,
    );
    expect(code).toBe(2);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('DATABASE_URL');
  });
});
