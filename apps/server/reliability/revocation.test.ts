/**
 * A revoked credential is refused on every process within a second (hardening issue, item 7): two
 * server processes on one PostgreSQL database; a CLI login token and an agent key are revoked
 * through one, and the other refuses them — each request reads the credential's row, nothing is
 * cached.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const run = promisify(execFile);
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

let db: Database;
let env: Record<string, string>;
let a: ServerProcess;
let b: ServerProcess;
let ownerCookie: Record<string, string>;

async function operator(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'silent' } });
  return stdout.trim();
}

async function get(server: ServerProcess, pathname: string, headers: Record<string, string>) {
  const res = await fetch(server.url + pathname, { headers });
  return { status: res.status, body: (await res.json()) as any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON under test
}

/** A login token through start, callback and poll, all on `server`. */
async function cliLogin(server: ServerProcess): Promise<string> {
  const start = await postJson(`${server.url}/api/v1/cli/auth/start`, {});
  const state = start.body.data.state as string;
  const callback = await postJson(`${server.url}/api/v1/cli/auth/callback`, { state, id_token: await operator('dev-token', '--email', 'owner@rel.test') });
  expect(callback.status, JSON.stringify(callback.body)).toBe(200);
  const poll = await get(server, `/api/v1/cli/auth/poll?state=${state}`, { 'user-agent': 'reftrack-cli/reliability' });
  return poll.body.data.token as string;
}

/**
 * Asks `server` until `refused` holds or a second has passed since `since` (the moment the revoking
 * call was answered); returns the answer and when it came.
 */
async function refusedWithinASecond(since: number, ask: () => Promise<{ status: number; body: any }>): Promise<{ status: number; body: any; afterMs: number }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (;;) {
    const answer = await ask();
    const afterMs = Date.now() - since;
    if (answer.status === 401 || afterMs > 1000) return { ...answer, afterMs };
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  db = await freshDatabase('postgres');
  env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
  await seed(env, programsFixture(1).fixture);
  [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
  const signIn = await postJson(`${a.url}/api/dashboard/session`, { id_token: await operator('dev-token', '--email', 'owner@rel.test') });
  expect(signIn.status).toBe(200);
  ownerCookie = { cookie: signIn.headers.get('set-cookie')!.split(';')[0] };
});
afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((s) => s.kill()));
  await db?.drop();
});

describe('two processes on PostgreSQL: a credential revoked through one is refused by the other within a second', () => {
  it('a CLI login token revoked in the dashboard of process A', async () => {
    const token = await cliLogin(a);
    const auth = { authorization: `Bearer ${token}` };
    expect((await get(b, '/api/v1/cli/programs', auth)).status).toBe(200);
    const list = await get(a, '/api/dashboard/cli-tokens', ownerCookie);
    const id = list.body.data.find((t: { label: string; revoked_at: string | null }) => t.label === 'reftrack-cli/reliability' && t.revoked_at === null).id;
    const revoked = await postJson(`${a.url}/api/dashboard/cli-tokens/${id}/revoke`, {}, ownerCookie);
    const since = Date.now();
    expect(revoked.status).toBe(200);
    const answer = await refusedWithinASecond(since, () => get(b, '/api/v1/cli/programs', auth));
    expect(answer.status, `process B still accepted the token ${answer.afterMs} ms after the revocation`).toBe(401);
    expect(answer.body.error.message).toBe('Invalid or expired token. Run `reftrack login` to refresh.');
    expect((await postJson(`${b.url}/api/v1/cli/init`, { name: 'X', domain: 'x.test', commission_type: 'fixed', commission_rate: 1 }, auth)).status).toBe(401);
  });

  it('a CLI login token revoked by `reftrack logout` on process A', async () => {
    const token = await cliLogin(a);
    const auth = { authorization: `Bearer ${token}` };
    expect((await get(b, '/api/v1/cli/programs', auth)).status).toBe(200);
    const logout = await postJson(`${a.url}/api/v1/cli/auth/logout`, {}, auth);
    const since = Date.now();
    expect(logout.status).toBe(200);
    const answer = await refusedWithinASecond(since, () => get(b, '/api/v1/cli/programs', auth));
    expect(answer.status, `process B still accepted the token ${answer.afterMs} ms after the revocation`).toBe(401);
  });

  it('an agent key revoked in the dashboard of process A', async () => {
    const key = await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read', '--name', 'reliability bot');
    const auth = { authorization: `Bearer ${key}` };
    expect((await get(b, '/api/agent/v1/programs', auth)).status).toBe(200);
    const list = await get(a, '/api/dashboard/workspaces/1/agent-keys', ownerCookie);
    const id = list.body.data.find((k: { name: string }) => k.name === 'reliability bot').id;
    const revoked = await postJson(`${a.url}/api/dashboard/agent-keys/${id}/revoke`, {}, ownerCookie);
    const since = Date.now();
    expect(revoked.status).toBe(200);
    const answer = await refusedWithinASecond(since, () => get(b, '/api/agent/v1/programs', auth));
    expect(answer.status, `process B still accepted the key ${answer.afterMs} ms after the revocation`).toBe(401);
    expect(answer.body.error.message).toBe('Invalid agent key');
  });

  it('an agent key revoked by the operator command, while both processes serve it', async () => {
    const key = await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read', '--name', 'operator bot');
    const auth = { authorization: `Bearer ${key}` };
    for (const server of [a, b]) expect((await get(server, '/api/agent/v1/programs', auth)).status).toBe(200);
    const id = /^id (\d+) .*"operator bot"/m.exec(await operator('agent-keys', 'list', '--workspace', '1'))![1];
    await operator('agent-keys', 'revoke', '--id', id);
    const since = Date.now();
    for (const server of [a, b]) {
      const answer = await refusedWithinASecond(since, () => get(server, '/api/agent/v1/programs', auth));
      expect(answer.status, `a process still accepted the key ${answer.afterMs} ms after the revocation`).toBe(401);
    }
  });
});
