/**
 * No secret — program key, agent key, CLI login token, dashboard session token, webhook signing
 * secret, the encryption key — appears in the logs or in any response but the one that issues it;
 * a failed statement is logged without its values; and the signing secrets are encrypted again
 * with a new key by `reftrack-server secrets rotate`. Real server processes, on both databases.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

const run = promisify(execFile);
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const keyId = (base64: string): string => createHash('sha256').update('reftrack secret-box key id\0').update(Buffer.from(base64, 'base64')).digest('hex').slice(0, 12);

describe.each(['sqlite', 'postgres'] as const)(`[%s] secrets stay out of logs and other responses`, (kind) => {
  let db: Database;
  let server: ServerProcess;
  let env: Record<string, string>;
  const { fixture } = programsFixture(1);
  const encryptionKey = randomBytes(32).toString('base64');
  const webhookSecret = 'whsec_topsecretvalue0123456789';
  let intakePath = '';

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

  const operator = async (extra: Record<string, string>, ...args: string[]) => (await run(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env, LOG_LEVEL: 'warn', ...extra } })).stdout.trim();

  async function signIn(): Promise<{ cookie: string }> {
    const idToken = await operator({}, 'dev-token', '--email', 'owner@rel.test');
    const signIn = await call('sign-in', '/api/dashboard/session', { method: 'POST', body: JSON.stringify({ id_token: idToken }) });
    return { cookie: signIn.headers.get('set-cookie')!.split(';')[0] };
  }

  /** A Stripe event of the connected account, signed with `secret`. */
  function stripeDelivery(secret: string): RequestInit {
    const payload = JSON.stringify({ id: `evt_${randomBytes(6).toString('hex')}`, object: 'event', type: 'plan.created', account: 'acct_rel', created: Math.floor(Date.now() / 1000), data: { object: { id: 'plan_1', object: 'plan' } } });
    return { method: 'POST', body: payload, headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) } };
  }

  beforeAll(async () => {
    db = await freshDatabase(kind);
    env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'trace', ENCRYPTION_KEY: encryptionKey };
    await seed(env, fixture);
    server = await spawnServer(env);
  });
  afterAll(async () => {
    await server?.kill();
    await db?.drop();
  });

  it('each secret appears only in the response that issues it', async () => {
    const withSession = await signIn();
    const sessionToken = withSession.cookie.split('=')[1];

    const regenerated = await call('regenerate', '/api/dashboard/programs/1/key', { method: 'POST', headers: withSession });
    const programKey = JSON.parse(regenerated.text).data.api_key as string;
    const connected = await call('payments', '/api/dashboard/programs/1/payments', { method: 'PUT', headers: withSession, body: JSON.stringify({ stripe_account_id: 'acct_rel', webhook_secret: webhookSecret }) });
    intakePath = new URL(JSON.parse(connected.text).data.intake_url).pathname;
    const agentKey = await operator({}, 'agent-keys', 'create', '--workspace', '1', '--scopes', 'programs:read');

    const start = JSON.parse((await call('cli-start', '/api/v1/cli/auth/start', { method: 'POST', body: '{}' })).text).data;
    await call('cli-callback', '/api/v1/cli/auth/callback', { method: 'POST', body: JSON.stringify({ state: start.state, id_token: await operator({}, 'dev-token', '--email', 'owner@rel.test') }) });
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
    expect((await call('stripe-at-address', intakePath, stripeDelivery(webhookSecret))).status).toBe(200);
    expect((await call('stripe-shared', '/api/v1/webhooks/stripe', stripeDelivery(webhookSecret))).status).toBe(200);
    expect((await call('stripe-wrong-secret', intakePath, stripeDelivery('whsec_wrongSecret0123456789'))).status).toBe(400);
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
      ['encryption key', encryptionKey, ''],
    ];
    for (const [name, secret, issuer] of secrets) {
      expect(secret.length, name).toBeGreaterThan(16);
      expect(logs.includes(secret), `${name} in the logs`).toBe(false);
      const leaks = responses.filter((r) => r.label !== issuer && r.text.includes(secret)).map((r) => r.label);
      expect(leaks, `${name} leaked into responses`).toEqual([]);
    }
    // The intake address is shown in Payments only, and the logs name just its first characters.
    const endpointId = intakePath.split('/').pop()!;
    expect(endpointId).toMatch(/^whe_[0-9A-Za-z]{32}$/);
    expect(logs.includes(endpointId), 'intake address in the logs').toBe(false);
    expect(logs).toContain(`"path":"/api/v1/webhooks/stripe/${endpointId.slice(0, 8)}…"`);
    expect(responses.filter((r) => r.text.includes(endpointId)).map((r) => r.label)).toEqual(['payments', 'payments-read']);
    server = await spawnServer(env);
  });

  it('a database error while saving a secret is logged without the statement’s values', async () => {
    // The write of a connection fails in the database itself; PostgreSQL's error also carries a
    // detail quoting the row, as unique and check violations do.
    const refuse =
      kind === 'sqlite'
        ? [
            "create trigger refuse_insert before insert on processor_connections begin select raise(abort, 'refused by the test trigger'); end",
            "create trigger refuse_update before update on processor_connections begin select raise(abort, 'refused by the test trigger'); end",
          ]
        : [
            "create function refuse_secret_write() returns trigger language plpgsql as $$ begin raise exception 'refused by the test trigger' using detail = 'Failing row contains (' || new.account_id || ', ' || new.secret_ciphertext || ')'; end $$",
            'create trigger refuse_secret_write before insert or update on processor_connections for each row execute function refuse_secret_write()',
          ];
    for (const sql of refuse) await query(db, sql);
    const secret = 'whsec_neverInTheLogs0123456789';
    const account = 'acct_boundValueMarker42';
    try {
      const withSession = await signIn();
      for (const programId of [1, 1]) {
        const res = await call('payments-failing', `/api/dashboard/programs/${programId}/payments`, { method: 'PUT', headers: withSession, body: JSON.stringify({ stripe_account_id: account, webhook_secret: secret }) });
        expect(res.status, res.text).toBe(500);
        expect(res.text).not.toContain(secret);
      }
    } finally {
      const undo = kind === 'sqlite' ? ['drop trigger refuse_insert', 'drop trigger refuse_update'] : ['drop trigger refuse_secret_write on processor_connections', 'drop function refuse_secret_write()'];
      for (const sql of undo) await query(db, sql);
    }
    await server.kill('SIGTERM');
    const lines = server.output().split('\n').filter(Boolean);
    const failures = lines.filter((l) => l.includes('"msg":"request failed"'));
    expect(failures.length).toBeGreaterThan(0);
    // The failure is there, with the statement (placeholders only) and the database's message.
    expect(failures[0]).toContain('refused by the test trigger');
    expect(failures[0]).toContain('processor_connections');
    for (const line of lines) {
      expect(line.includes(secret), `secret in: ${line}`).toBe(false);
      expect(line.includes(account), `bound value in: ${line}`).toBe(false);
      expect(/v1:[0-9a-f]{12}:/.test(line), `sealed value in: ${line}`).toBe(false);
      expect(line.includes('Failing row'), `row detail in: ${line}`).toBe(false);
    }
    server = await spawnServer(env);
  });

  it('`reftrack-server secrets rotate` encrypts every stored secret with the new key; a wrong key stops with one line', async () => {
    await server.kill('SIGTERM');
    const newKey = randomBytes(32).toString('base64');
    const stored = async () => (await query<{ secret_ciphertext: string }>(db, 'select secret_ciphertext from processor_connections'))[0].secret_ciphertext;
    expect((await stored()).split(':')[1]).toBe(keyId(encryptionKey));

    // Without the old key the command refuses, and changes nothing.
    const refused = await operator({ ENCRYPTION_KEY: newKey }, 'secrets', 'rotate').catch((err: { code: number; stderr: string }) => err);
    expect(refused).toMatchObject({ code: 2 });
    const stderr = (refused as { stderr: string }).stderr.trim();
    expect(stderr.split('\n')).toHaveLength(1);
    expect(stderr).toContain(`were encrypted with key id ${keyId(encryptionKey)}, which is neither ENCRYPTION_KEY (key id ${keyId(newKey)}) nor in ENCRYPTION_KEY_PREVIOUS`);
    expect(stderr).not.toContain(newKey);
    expect((await stored()).split(':')[1]).toBe(keyId(encryptionKey));

    const out = await operator({ ENCRYPTION_KEY: newKey, ENCRYPTION_KEY_PREVIOUS: encryptionKey }, 'secrets', 'rotate');
    expect(out).toContain(`stored secrets: 1 re-encrypted with key id ${keyId(newKey)}, 0 already current`);
    expect(out).toContain('ENCRYPTION_KEY_PREVIOUS can be removed');
    expect((await stored()).split(':')[1]).toBe(keyId(newKey));

    // The new key alone serves: the connection still verifies its events.
    env = { ...env, ENCRYPTION_KEY: newKey };
    server = await spawnServer(env);
    expect((await call('stripe-after-rotation', intakePath, stripeDelivery(webhookSecret))).status).toBe(200);
  });
});
