/**
 * Secrets at rest (docs/operator.md "Secrets at rest"): a processor's webhook signing secret is
 * stored sealed by the secret box (AES-256-GCM, key from ENCRYPTION_KEY), on SQLite and PostgreSQL.
 * Servers here start on one database several times, with different keys.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDatabaseUrl } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { createDb } from '../src/db/knex.js';
import { migrationConfig } from '../src/db/migrate.js';
import { loadFixture } from '../src/seed/fixture.js';
import { signDevToken } from '../src/auth/id-token.js';
import { rotateStoredSecrets } from '../src/secrets/stored-secrets.js';
import { openSecretBox } from '../src/secrets/encryption-key.js';
import { keyIdOf } from '../src/secrets/secret-box.js';
import { baseFixture, createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';

const MIGRATION = '20261124100000_processor_connections.js';
const SECRET = 'whsec_atRestSecretValue0123456789';
const newKey = (): string => randomBytes(32).toString('base64');

const databases: TestDatabase[] = [];
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of databases.splice(0)) await d.drop();
});

async function database(): Promise<TestDatabase> {
  const d = await createTestDatabase();
  databases.push(d);
  return d;
}

const env = (d: TestDatabase, extra: Record<string, string>) => ({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: d.url, LOG_LEVEL: 'silent', ...extra });

async function start(d: TestDatabase, extra: Record<string, string>): Promise<RunningServer> {
  const running = await startServer(loadConfig(env(d, extra)), { logger: pino({ level: 'silent' }) });
  servers.push(running);
  return running;
}

async function stop(running: RunningServer): Promise<void> {
  servers.splice(servers.indexOf(running), 1);
  await running.close();
}

async function send(running: RunningServer, method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(running.url + pathname, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

async function signIn(running: RunningServer): Promise<Record<string, string>> {
  const res = await fetch(`${running.url}/api/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id_token: await signDevToken(running.deps.db, 'owner@acme.test') }) });
  expect(res.status).toBe(200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0] };
}

async function connectProgram1(running: RunningServer, secret = SECRET, account = 'acct_atRest'): Promise<string> {
  const res = await send(running, 'PUT', '/api/dashboard/programs/1/payments', { stripe_account_id: account, webhook_secret: secret }, await signIn(running));
  expect(res.status, res.text).toBe(200);
  return new URL(res.body.data.intake_url).pathname;
}

/** A signed Stripe event of program 1's account, delivered to `to`. */
async function deliver(running: RunningServer, to: string, secret = SECRET, account = 'acct_atRest') {
  const payload = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, object: 'event', type: 'plan.created', account, created: Math.floor(Date.now() / 1000), data: { object: { id: 'plan_1', object: 'plan' } } });
  return send(running, 'POST', to, payload, { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) });
}

const storedSecrets = async (running: RunningServer): Promise<string[]> => (await running.deps.db('processor_connections').orderBy('id').pluck('secret_ciphertext')) as string[];

describe(`[${dbKind}] secrets at rest: the signing secret is stored encrypted`, () => {
  it('the stored column holds a sealed value naming the key, never the plaintext; the intake verifies with it', async () => {
    const key = newKey();
    const running = await start(await database(), { ENCRYPTION_KEY: key });
    await loadFixture(running.deps.db, baseFixture());
    const intake = await connectProgram1(running);
    const [sealed] = await storedSecrets(running);
    expect(sealed).toMatch(new RegExp(`^v1:${keyIdOf(Buffer.from(key, 'base64'))}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain(SECRET);
    expect(sealed).not.toContain(SECRET.slice('whsec_'.length));
    expect(Buffer.from(sealed.split(':')[3], 'base64url').toString('latin1')).not.toContain(SECRET.slice(6));
    const program = await running.deps.db('programs').where({ id: 1 }).first();
    expect(JSON.stringify(program)).not.toContain(SECRET);
    expect((await deliver(running, intake)).status).toBe(200);
  });

  it('the same secret stored twice gives two different values (a random IV per value)', async () => {
    const running = await start(await database(), { ENCRYPTION_KEY: newKey() });
    await loadFixture(running.deps.db, baseFixture());
    const cookie = await signIn(running);
    for (const id of [1, 2]) expect((await send(running, 'PUT', `/api/dashboard/programs/${id}/payments`, { stripe_account_id: `acct_twice${id}`, webhook_secret: SECRET }, cookie)).status).toBe(200);
    const [a, b] = await storedSecrets(running);
    expect(a).not.toBe(b);
    expect(a.split(':').slice(0, 2)).toEqual(b.split(':').slice(0, 2));
  });
});

describe(`[${dbKind}] secrets at rest: keys`, () => {
  it('a server started with another key refuses to start, in one line naming the key ids', async () => {
    const d = await database();
    const first = await start(d, { ENCRYPTION_KEY: newKey() });
    await loadFixture(first.deps.db, baseFixture());
    await connectProgram1(first);
    const stored = (await storedSecrets(first))[0].split(':')[1];
    await stop(first);
    const wrong = newKey();
    const refused = startServer(loadConfig(env(d, { ENCRYPTION_KEY: wrong })), { logger: pino({ level: 'silent' }) });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(
      `1 stored secret(s) were encrypted with key id ${stored}, which is neither ENCRYPTION_KEY (key id ${keyIdOf(Buffer.from(wrong, 'base64'))}) nor in ENCRYPTION_KEY_PREVIOUS`,
    );
  });

  it('a malformed key stops the start with one clear line that does not repeat the key', async () => {
    const d = await database();
    for (const bad of ['not-a-key', 'c2hvcnQ=', 'z'.repeat(64), randomBytes(31).toString('base64')]) {
      const refused = startServer(loadConfig(env(d, { ENCRYPTION_KEY: bad })), { logger: pino({ level: 'silent' }) });
      await expect(refused).rejects.toThrow(new ConfigError('ENCRYPTION_KEY must be 32 bytes given as base64 (44 characters) or hex (64 characters); generate one with: openssl rand -base64 32'));
    }
    const previous = startServer(loadConfig(env(d, { ENCRYPTION_KEY: newKey(), ENCRYPTION_KEY_PREVIOUS: `${newKey()},oops` })), { logger: pino({ level: 'silent' }) });
    await expect(previous).rejects.toThrow('ENCRYPTION_KEY_PREVIOUS (key 2) must be 32 bytes');
  });

  it('a key given as 64 hex characters works like its base64 form', async () => {
    const bytes = randomBytes(32);
    const d = await database();
    const hex = await start(d, { ENCRYPTION_KEY: bytes.toString('hex') });
    await loadFixture(hex.deps.db, baseFixture());
    const intake = await connectProgram1(hex);
    await stop(hex);
    const b64 = await start(d, { ENCRYPTION_KEY: bytes.toString('base64') });
    expect((await deliver(b64, intake)).status).toBe(200);
  });

  it('an exposed server without ENCRYPTION_KEY refuses to start, naming the variable and why', async () => {
    const d = await database();
    // ALLOW_DEV_SIGN_IN: the development sign-in's own refusal would otherwise come first.
    const refused = startServer(loadConfig(env(d, { NODE_ENV: 'production', ALLOW_DEV_SIGN_IN: 'true' })), { logger: pino({ level: 'silent' }) });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow('ENCRYPTION_KEY is required because this server is exposed (NODE_ENV=production)');
    const https = startServer(loadConfig(env(d, { PUBLIC_BASE_URL: 'https://track.example.com', ALLOW_DEV_SIGN_IN: 'true' })), { logger: pino({ level: 'silent' }) });
    await expect(https).rejects.toThrow('ENCRYPTION_KEY is required because this server is exposed (PUBLIC_BASE_URL is https)');
  });

  it('in local development without a key, a key file is made once (mode 0600) beside the database and used again', async () => {
    const d = await database();
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-cwd-'));
    try {
      const config = loadConfig(env(d, {}));
      const first = openSecretBox(config, cwd);
      const expected = config.database.client === 'sqlite' ? `${config.database.filename}.encryption-key` : path.join(cwd, '.reftrack', 'postgres.encryption-key');
      expect(first.devKeyFile).toBe(expected);
      expect(fs.statSync(expected).mode & 0o777).toBe(0o600);
      const again = openSecretBox(config, cwd);
      expect(again.box.keyId).toBe(first.box.keyId);
      expect(again.box.open(first.box.seal('whsec_x', 'p'), 'p')).toBe('whsec_x');
      // With ENCRYPTION_KEY set, the file is not used.
      expect(openSecretBox(loadConfig(env(d, { ENCRYPTION_KEY: newKey() })), cwd).devKeyFile).toBeUndefined();
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe(`[${dbKind}] secrets at rest: rotation`, () => {
  it('new key plus the old one in ENCRYPTION_KEY_PREVIOUS: the server starts and verifies; rotating re-encrypts every secret; then the old key can go', async () => {
    const d = await database();
    const oldKey = newKey();
    const newer = newKey();
    const before = await start(d, { ENCRYPTION_KEY: oldKey });
    await loadFixture(before.deps.db, baseFixture());
    const intake = await connectProgram1(before);
    const oldValue = (await storedSecrets(before))[0];
    await stop(before);

    const during = await start(d, { ENCRYPTION_KEY: newer, ENCRYPTION_KEY_PREVIOUS: oldKey });
    expect((await deliver(during, intake)).status).toBe(200);
    expect(await rotateStoredSecrets(during.deps.db, during.deps.secrets)).toEqual({ resealed: 1, current: 0 });
    const [rotated] = await storedSecrets(during);
    expect(rotated.split(':')[1]).toBe(keyIdOf(Buffer.from(newer, 'base64')));
    expect(rotated).not.toBe(oldValue);
    expect(await rotateStoredSecrets(during.deps.db, during.deps.secrets)).toEqual({ resealed: 0, current: 1 });
    await stop(during);

    const after = await start(d, { ENCRYPTION_KEY: newer });
    expect((await deliver(after, intake)).status).toBe(200);
  });
});

describe(`[${dbKind}] secrets at rest: upgrade from an earlier release`, () => {
  it('plaintext secrets of an older database are encrypted at start, their column cleared, and keep verifying', async () => {
    const d = await database();
    const config = parseDatabaseUrl(d.url);
    const schema = config.client === 'postgres' ? config.schema : undefined;
    const db = createDb(config);
    try {
      // The database as the release before this one left it. The fixture is written for today's
      // schema, so: every migration, the fixture, then back down to just before this release's.
      const migrations = migrationConfig(schema);
      await db.migrate.latest(migrations);
      await loadFixture(db, baseFixture());
      for (;;) {
        const [completed] = (await db.migrate.list(migrations)) as [Array<{ name: string } | string>, unknown[]];
        const names = completed.map((m) => (typeof m === 'string' ? m : m.name));
        if (!names.includes(MIGRATION)) break;
        await db.migrate.down(migrations);
      }
      expect(await db.schema.hasTable('processor_connections')).toBe(false);
      // Programs 1 and 2 shared one Stripe endpoint (one secret); program 3 had its own.
      await db('programs').whereIn('id', [1, 2]).update({ stripe_account_id: 'acct_upgradeShared', stripe_webhook_secret: SECRET });
      await db('programs').where({ id: 3 }).update({ stripe_account_id: 'acct_upgradeOwn', stripe_webhook_secret: 'whsec_upgradeOwnSecret' });
    } finally {
      await db.destroy();
    }

    const key = newKey();
    const running = await start(d, { ENCRYPTION_KEY: key });
    const programs = await running.deps.db('programs').orderBy('id').select('id', 'stripe_account_id', 'stripe_webhook_secret');
    for (const p of programs) expect(p).toMatchObject({ stripe_account_id: null, stripe_webhook_secret: null });
    const connections = await running.deps.db('processor_connections').orderBy('program_id').select('program_id', 'account_id', 'endpoint_id', 'secret_ciphertext');
    expect(connections.map((c) => [c.program_id, c.account_id])).toEqual([
      [1, 'acct_upgradeShared'],
      [2, 'acct_upgradeShared'],
      [3, 'acct_upgradeOwn'],
    ]);
    for (const c of connections) {
      expect(c.secret_ciphertext).toMatch(/^v1:/);
      expect(c.secret_ciphertext).not.toContain('whsec_');
      expect(c.endpoint_id).toMatch(/^whe_[0-9A-Za-z]{32}$/);
    }
    // Each program shows its own address in Payments; the old secret verifies there and on the shared address.
    const cookie = await signIn(running);
    const view = (await send(running, 'GET', '/api/dashboard/programs/3/payments', undefined, cookie)).body.data;
    expect(view).toMatchObject({ connected: true, stripe_account_id: 'acct_upgradeOwn', webhook_secret_set: true });
    const intake = new URL(view.intake_url).pathname;
    expect((await deliver(running, intake, 'whsec_upgradeOwnSecret', 'acct_upgradeOwn')).body.data).toMatchObject({ program_id: 3 });
    expect((await deliver(running, '/api/v1/webhooks/stripe', 'whsec_upgradeOwnSecret', 'acct_upgradeOwn')).body.data).toMatchObject({ program_id: 3 });
    await stop(running);

    // A second start finds nothing left to move: the connections stay as they are.
    const again = await start(d, { ENCRYPTION_KEY: key });
    expect(await again.deps.db('processor_connections').orderBy('program_id').select('program_id', 'account_id', 'endpoint_id', 'secret_ciphertext')).toEqual(connections);
  });
});
