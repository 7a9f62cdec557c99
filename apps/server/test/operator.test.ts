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
/** The operator's working folder (PostgreSQL's demo key file goes under its .reftrack/). */
let workDir: string;

/** The operator command, run as a separate process against the test server's database. */
async function operator(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { cwd: workDir, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } });
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
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-fixture-'));
  fixtureFile = path.join(workDir, 'fixture.json');
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

  it('seed --demo keeps the demo key across runs in a 0600 file beside the database; --rotate-demo-key replaces it', async () => {
    const keyOf = (stdout: string) => /Demo program key: (aff_[0-9A-Za-z]+)/.exec(stdout)?.[1];
    const first = await operator('seed', '--demo');
    const key = keyOf(first.stdout)!;
    expect(first.stdout).toMatch(/Test affiliate link \(served by `start --demo`\): http:\/\/\S+\/demo\/shop\?aff=demo/);
    const file = /kept in (\S+);|saved in (\S+) \(mode 600\)/.exec(first.stdout)!.slice(1).find(Boolean)!;
    const cfg = s.running.deps.config.database;
    expect(file).toBe(cfg.client === 'sqlite' ? `${cfg.filename}.demo-key` : path.join(workDir, '.reftrack', `demo-key.${cfg.schema}`));
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(key);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const again = await operator('seed', '--demo');
    expect(keyOf(again.stdout)).toBe(key);
    expect(again.stdout).toContain('the same key as the last run');
    expect((await s.get('/api/v1/programs/me/readiness', bearer(key))).status).toBe(200);
    // The database still holds only the key's hash.
    expect(JSON.stringify(await s.db('program_keys').select())).not.toContain(key);

    const rotated = await operator('seed', '--demo', '--rotate-demo-key');
    const fresh = keyOf(rotated.stdout)!;
    expect(fresh).not.toBe(key);
    expect(rotated.stdout).toContain('a new key');
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(fresh);
    await withinASecond(() => s.get('/api/v1/programs/me/readiness', bearer(key)), (r) => r.status === 401);
    expect((await s.get('/api/v1/programs/me/readiness', bearer(fresh))).status).toBe(200);
  });

  it('seed --demo does not bring back a demo key replaced elsewhere, nor one that was retired', async () => {
    const keyOf = (stdout: string) => /Demo program key: (aff_[0-9A-Za-z]+)/.exec(stdout)?.[1];
    const saved = keyOf((await operator('seed', '--demo')).stdout)!;
    const programId = (await s.db('programs').where({ name: 'Demo program' }).first('id')).id as number;
    const replaced = (await operator('keys', 'regenerate', '--program', String(programId))).stdout.trim();
    const next = keyOf((await operator('seed', '--demo')).stdout)!;
    expect([saved, replaced]).not.toContain(next);
    await s.db('program_keys').where({ program_id: programId }).update({ rotation_marked_at: Date.now() - 2000, rotation_deadline: Date.now() - 1000 });
    const afterRetired = keyOf((await operator('seed', '--demo')).stdout)!;
    expect(afterRetired).not.toBe(next);
    expect((await s.get('/api/v1/programs/me/readiness', bearer(afterRetired))).status).toBe(200);
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
    const devToken = async () => (await operator('dev-token', '--email', 'owner@acme.test')).stdout.trim();
    expect((await operator('accounts', 'suspend', '--email', 'owner@acme.test')).code).toBe(0);
    expect((await s.post('/api/dashboard/session', { id_token: await devToken() })).body.error.details).toEqual({ code: 'ACCOUNT_BLOCKED' });
    expect((await operator('accounts', 'restore', '--email', 'owner@acme.test')).code).toBe(0);
    // An id_token signs in once (docs/security.md): each sign-in gets a fresh one.
    expect((await s.post('/api/dashboard/session', { id_token: await devToken() })).status).toBe(200);
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

  it('agent-keys list shows a workspace’s keys masked; agent-keys revoke stops a key on the running server within a second', async () => {
    const key = (await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read', '--name', 'ops bot')).stdout.trim();
    expect((await s.get('/api/agent/v1/programs', bearer(key))).status).toBe(200);
    const list = await operator('agent-keys', 'list', '--workspace', '1');
    expect(list.code).toBe(0);
    const line = list.stdout.split('\n').find((l) => l.includes('"ops bot"'))!;
    expect(line).toContain(`••••••••${key.slice(-4)}`);
    expect(line).toContain('programs:read');
    expect(line).toContain('active');
    expect(list.stdout).not.toContain(key);
    const id = /^id (\d+)/.exec(line)![1];
    const revoked = await operator('agent-keys', 'revoke', '--id', id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`agent key ${id}`);
    const refused = await withinASecond(
      () => s.get('/api/agent/v1/programs', bearer(key)),
      (r) => r.status === 401,
    );
    expect(refused.body.error.message).toBe('Invalid agent key');
    expect((await operator('agent-keys', 'list', '--workspace', '1')).stdout.split('\n').find((l) => l.startsWith(`id ${id} `))).toContain('REVOKED');
    expect((await operator('agent-keys', 'revoke', '--id', '999999')).code).toBe(2);
    expect((await operator('agent-keys', 'list', '--workspace', '999')).stderr).toContain('workspace 999 not found');
  });

  it('cli-tokens revoke stops every CLI login token of an account (a lost laptop); cli-tokens list shows them', async () => {
    const login = async () => {
      const state = (await s.post('/api/v1/cli/auth/start', {})).body.data.state;
      const idToken = (await operator('dev-token', '--email', 'owner@acme.test')).stdout.trim();
      expect((await s.post('/api/v1/cli/auth/callback', { state, id_token: idToken })).status).toBe(200);
      return (await s.get(`/api/v1/cli/auth/poll?state=${state}`, { 'user-agent': 'reftrack-cli/operator-test' })).body.data.token as string;
    };
    const tokens = [await login(), await login()];
    for (const t of tokens) expect((await s.get('/api/v1/cli/programs', bearer(t))).status).toBe(200);
    const list = await operator('cli-tokens', 'list', '--email', 'owner@acme.test');
    expect(list.stdout.split('\n').filter((l) => l.includes('"reftrack-cli/operator-test"') && l.endsWith('active'))).toHaveLength(2);
    const out = await operator('cli-tokens', 'revoke', '--email', 'owner@acme.test');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/owner@acme\.test: \d+ CLI tokens? revoked/);
    for (const t of tokens) {
      const r = await withinASecond(
        () => s.get('/api/v1/cli/programs', bearer(t)),
        (res) => res.status === 401,
      );
      expect(r.body.error.message).toBe('Invalid or expired token. Run `reftrack login` to refresh.');
    }
    expect((await operator('cli-tokens', 'revoke', '--email', 'nobody@x.test')).code).toBe(2);
  });

  it('prune deletes expired login sessions once and says how many of each kind', async () => {
    await s.db('cli_login_sessions').insert({ state_hash: 'f'.repeat(64), status: 'pending', created_at: 0, expires_at: 1 });
    const out = await operator('prune');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^cli_login_sessions: [1-9]\d* deleted$/m);
    expect(out.stdout).toMatch(/^used_id_tokens: \d+ deleted$/m);
    expect(await s.db('cli_login_sessions').where({ state_hash: 'f'.repeat(64) }).first()).toBeUndefined();
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
