/**
 * No secret — program key, agent key, CLI login token, dashboard session token, webhook signing
 * secret — appears in the logs or in any response but the one that issues it.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const run = promisify(execFile);
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

describe.each(['sqlite', 'postgres'] as const)(`[%s] secrets stay out of logs and other responses`, (kind) => {
  let db: Database;
  let server: ServerProcess;
  let env: Record<string, string>;
  const { fixture } = programsFixture(1);

  interface Seen {
    label: string;
    text: string;
  }
  const responses: Seen[] = [];

  async function call(label: string, pathname: string, init: RequestInit = {}): Promise<{ status: number; text: string; headers: Headers }> {
    const res = await fetch(server.url + pathname, { ...init, headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.50', ...(init.headers as Record<string, string>) } });
    const text = await res.text();
    responses.push({ label, text: `${[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${text}` });
    return { status: res.status, text, headers: res.headers };
  }

  beforeAll(async () => {
    db = await freshDatabase(kind);
    env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'trace' };
    await seed(env, fixture);
    server = await spawnServer(env);
  });
  afterAll(async () => {
    await server?.kill();
    await db?.drop();
  });

  it('each secret appears only in the response that issues it', async () => {
    const operator = async (...args: string[]) => (await run(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'warn' } })).stdout.trim();
    const idToken = await operator('dev-token', '--email', 'owner@rel.test');

    const signIn = await call('sign-in', '/api/dashboard/session', { method: 'POST', body: JSON.stringify({ id_token: idToken }) });
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const sessionToken = cookie.split('=')[1];
    const withSession = { cookie };

    const regenerated = await call('regenerate', '/api/dashboard/programs/1/key', { method: 'POST', headers: withSession });
    const programKey = JSON.parse(regenerated.text).data.api_key as string;
    const webhookSecret = 'whsec_topsecretvalue0123456789';
    await call('payments', '/api/dashboard/programs/1/payments', { method: 'PUT', headers: withSession, body: JSON.stringify({ stripe_account_id: 'acct_rel', webhook_secret: webhookSecret }) });
    const agentKey = await operator('agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read');

    const start = JSON.parse((await call('cli-start', '/api/v1/cli/auth/start', { method: 'POST', body: '{}' })).text).data;
    await call('cli-callback', '/api/v1/cli/auth/callback', { method: 'POST', body: JSON.stringify({ state: start.state, id_token: await operator('dev-token', '--email', 'owner@rel.test') }) });
    const poll = await call('cli-poll', `/api/v1/cli/auth/poll?state=${start.state}`);
    const loginToken = JSON.parse(poll.text).data.token as string;

    // Use every secret, rightly and wrongly, so the server has every chance to echo or log it.
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    await call('readiness', '/api/v1/programs/me/readiness', { headers: bearer(programKey) });
    await call('sale', '/api/v1/track/sale', { method: 'POST', headers: bearer(programKey), body: JSON.stringify({ additional_data: { test_mode: true } }) });
    await call('sale-bad', '/api/v1/track/sale', { method: 'POST', headers: bearer(programKey), body: '{"broken' });
    await call('agent', '/api/agent/v1/programs', { headers: bearer(agentKey) });
    await call('agent-with-program-key', '/api/agent/v1/programs', { headers: bearer(programKey) });
    await call('cli-programs', '/api/v1/cli/programs', { headers: bearer(loginToken) });
    await call('cli-status-with-login-token', '/api/v1/cli/status', { headers: bearer(loginToken) });
    await call('dashboard', '/api/dashboard/programs/1', { headers: withSession });
    await call('payments-read', '/api/dashboard/programs/1/payments', { headers: withSession });
    await call('dashboard-with-key', '/api/dashboard/programs', { headers: bearer(programKey) });
    await call('lead-with-agent-key', '/api/v1/track/lead', { method: 'POST', headers: bearer(agentKey), body: JSON.stringify({ click_id: 'clk_x' }) });
    await call('sign-out', '/api/dashboard/session', { method: 'DELETE', headers: withSession });

    await server.kill('SIGTERM');
    const logs = server.output();
    expect(logs).toContain('"msg":"request"');

    const secrets: Array<[string, string, string]> = [
      ['program key', programKey, 'regenerate'],
      ['agent key', agentKey, ''],
      ['login token', loginToken, 'cli-poll'],
      ['session token', sessionToken, 'sign-in'],
      ['webhook secret', webhookSecret, ''],
    ];
    for (const [name, secret, issuer] of secrets) {
      expect(secret.length, name).toBeGreaterThan(16);
      expect(logs.includes(secret), `${name} in the logs`).toBe(false);
      const leaks = responses.filter((r) => r.label !== issuer && r.text.includes(secret)).map((r) => r.label);
      expect(leaks, `${name} leaked into responses`).toEqual([]);
    }
    server = await spawnServer(env);
  });
});
