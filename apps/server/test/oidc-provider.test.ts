/**
 * Sign-in with a real OpenID provider (issue 17, docs/accounts.md): `oidc-provider` behind nginx on
 * loopback, the server as its confidential client, driven in real Chromium — the dashboard's code
 * flow and sign-out, `reftrack login` with the built CLI to the end, and the refusals an operator
 * must be able to read (unverified e-mail, replayed id_token, state mismatch, unreachable provider).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_LOGIN_CONFIRM, DASHBOARD_SESSION_COOKIE, ERRORS, SIGN_IN_PATHS, SIGN_IN_REFUSALS } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { loadConfig } from '../src/config.js';
import { checkOidc } from '../src/ops/oidc-check.js';
import { CONFIDENTIAL, freePort, startOidcProvider, type RunningProvider } from './helpers/oidc-provider.js';

const CLI_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../packages/cli');
const CLI_BIN = path.join(CLI_ROOT, 'dist/reftrack.js');

/** The server's log lines, to check that each refusal is logged with its reason and request id. */
const logLines: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }),
);
const refusalLogged = (reason: string, requestId: string) => logLines.some((l) => l.reason === reason && l.request_id === requestId);

let provider: RunningProvider;
let s: TestServer;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  // The CLI is not a dependency of the server (it is the other way round), so the build pipeline
  // does not build it first: build its binary from the current source, as its own tests do.
  execFileSync(process.execPath, [path.join(CLI_ROOT, 'node_modules/tsup/dist/cli-default.js')], { cwd: CLI_ROOT, stdio: 'pipe' });
  const port = await freePort();
  origin = `http://localhost:${port}`;
  provider = await startOidcProvider({
    redirectUris: [`${origin}${SIGN_IN_PATHS.callback}`],
    postLogoutRedirectUris: [`${origin}${SIGN_IN_PATHS.signedOut}`],
    accounts: {
      alice: { email: 'alice@corp.test', email_verified: true, name: 'Alice' },
      // Claims the existing owner's address without the provider having verified it.
      mallory: { email: 'owner@acme.test', email_verified: false, name: 'Mallory' },
      stringy: { email: 'owner@acme.test', email_verified: 'true' },
      owner: { email: 'owner@acme.test', email_verified: true },
    },
  });
  s = await startTestServer({
    logger,
    env: { PORT: String(port), OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: CONFIDENTIAL.id, OIDC_CLIENT_SECRET: CONFIDENTIAL.secret, OIDC_PROVIDER_NAME: 'Corp SSO' },
  });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await s?.close();
  await provider?.close();
});

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext();
  // The provider's stock pages import a web font; this machine has no internet.
  await context.route((url) => !['localhost', '127.0.0.1'].includes(url.hostname), (route) => route.abort());
  return context;
}

/** The provider's development login form and consent page. */
async function signInAtProvider(p: Page, login: string): Promise<void> {
  await p.waitForURL((u) => u.href.startsWith(provider.issuer));
  await p.locator('input[name=login]').fill(login);
  await p.locator('input[name=password]').fill('any password');
  await p.getByRole('button', { name: 'Sign-in' }).click();
  await p.getByRole('button', { name: 'Continue' }).click();
}

/** The provider's redirect to the server's callback, as the browser requested it. */
function capture(p: Page): Promise<string> {
  return new Promise((resolve) => {
    p.on('request', (r) => {
      if (r.url().startsWith(`${origin}${SIGN_IN_PATHS.callback}?`)) resolve(r.url());
    });
  });
}

const requestIdOn = async (p: Page) => (await p.locator('#request-id').textContent())!.trim();

describe(`[${dbKind}] dashboard sign-in by the code flow`, () => {
  it('"Sign in with" goes to the provider with PKCE (S256), state and nonce, and comes back signed in to the page asked for', async () => {
    const context = await newContext();
    const p = await context.newPage();
    const authorize: URL[] = [];
    p.on('request', (r) => {
      if (r.url().startsWith(`${provider.issuer}/auth`)) authorize.push(new URL(r.url()));
    });
    await p.goto(`${origin}/access`);
    await p.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await signInAtProvider(p, 'alice');
    await p.waitForURL(`${origin}/access`);
    await p.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
    const q = authorize[0].searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('state')).toBeTruthy();
    expect(q.get('nonce')).toBeTruthy();
    expect(q.get('redirect_uri')).toBe(`${origin}${SIGN_IN_PATHS.callback}`);
    // The account is bound to the provider's (iss, sub).
    const account = await s.db('accounts').where({ email: 'alice@corp.test' }).first('id');
    expect(await s.db('account_identities').where({ account_id: account.id }).select('issuer', 'subject')).toEqual([{ issuer: provider.issuer, subject: 'alice' }]);
    await context.close();
  });

  it('sign-out ends the provider session too, and comes back to the signed-out page', async () => {
    const context = await newContext();
    const p = await context.newPage();
    await p.goto(`${origin}/sign-in`);
    await p.getByRole('link', { name: 'Sign in with Corp SSO' }).click();
    await signInAtProvider(p, 'alice');
    await p.getByRole('heading', { level: 1, name: 'Programs' }).waitFor();
    const cookie = (await context.cookies(origin)).find((c) => c.name === DASHBOARD_SESSION_COOKIE)!;
    await p.getByRole('button', { name: 'Sign out' }).click();
    await p.waitForURL((u) => u.href.startsWith(`${provider.issuer}/session/end`));
    await p.getByRole('button', { name: 'Yes, sign me out' }).click();
    await p.waitForURL(`${origin}${SIGN_IN_PATHS.signedOut}`);
    await p.locator('#signed-out').waitFor();
    expect((await s.get('/api/dashboard/session', { cookie: `${DASHBOARD_SESSION_COOKIE}=${cookie.value}` })).status).toBe(401);
    // The provider's session is gone: signing in again asks for the login.
    await p.goto(`${origin}${SIGN_IN_PATHS.start}`);
    await p.waitForURL((u) => u.href.startsWith(provider.issuer));
    await p.locator('input[name=login]').waitFor();
    await context.close();
  });

  it('an existing e-mail-only account is bound at its next sign-in when the provider verified the e-mail', async () => {
    expect(await s.db('account_identities as i').join('accounts as a', 'a.id', 'i.account_id').where('a.email', 'owner@acme.test').count({ n: '*' }).first()).toMatchObject({ n: 0 });
    const context = await newContext();
    const p = await context.newPage();
    await p.goto(`${origin}${SIGN_IN_PATHS.start}`);
    await signInAtProvider(p, 'owner');
    await p.getByRole('heading', { level: 1, name: 'Programs' }).waitFor();
    expect(await s.db('account_identities as i').join('accounts as a', 'a.id', 'i.account_id').where('a.email', 'owner@acme.test').select('i.subject')).toEqual([{ subject: 'owner' }]);
    await context.close();
  });
});

describe(`[${dbKind}] refused sign-ins: a plain page with what to try and the request id, and a log line with the reason`, () => {
  it('refuses email_verified: false (and the string "true") for an existing account, binding nothing', async () => {
    for (const login of ['mallory', 'stringy']) {
      const context = await newContext();
      const p = await context.newPage();
      await p.goto(`${origin}${SIGN_IN_PATHS.start}`);
      await signInAtProvider(p, login);
      await p.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.email_unverified.title }).waitFor();
      expect(await p.content()).toContain(SIGN_IN_REFUSALS.email_unverified.tryThis);
      expect(refusalLogged('email_unverified', await requestIdOn(p))).toBe(true);
      expect((await context.cookies(origin)).some((c) => c.name === DASHBOARD_SESSION_COOKIE)).toBe(false);
      expect(await s.db('account_identities').where({ subject: login }).first()).toBeUndefined();
      await context.close();
    }
  });

  it('refuses a replayed id_token: one issued by the provider signs in once', async () => {
    // The test is the client here: its own code flow against the provider yields a real id_token.
    const config = await oidc.discovery(new URL(provider.issuer), CONFIDENTIAL.id, CONFIDENTIAL.secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: `${origin}${SIGN_IN_PATHS.callback}`, scope: 'openid email profile', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state });
    const context = await newContext();
    const p = await context.newPage();
    // A redirect is not routable in Playwright; the request is seen, and the server, which did not
    // start this flow, refuses it without touching the code.
    const callback = capture(p);
    await p.goto(url.href);
    await signInAtProvider(p, 'alice');
    await p.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.state_mismatch.title }).waitFor();
    const tokens = await oidc.authorizationCodeGrant(config, new URL(await callback), { pkceCodeVerifier: verifier, expectedState: state });
    const first = await s.post('/api/dashboard/session', { id_token: tokens.id_token });
    expect(first.status, first.text).toBe(200);
    const again = await s.post('/api/dashboard/session', { id_token: tokens.id_token });
    expect(again.body.error.message).toBe(ERRORS.idTokenReplayed.message);
    expect(refusalLogged('replayed', again.headers.get('x-request-id')!)).toBe(true);
    await context.close();
  });

  it('refuses a state mismatch: an answer for a sign-in another browser started (login CSRF), and the same answer twice', async () => {
    const attacker = await newContext();
    const a = await attacker.newPage();
    const captured = capture(a);
    await a.goto(`${origin}${SIGN_IN_PATHS.start}`);
    await signInAtProvider(a, 'alice');
    const callback = await captured;
    await a.getByRole('heading', { level: 1, name: 'Programs' }).waitFor();
    const victim = await newContext();
    const v = await victim.newPage();
    const res = await v.goto(callback);
    expect(res!.status()).toBe(400);
    await v.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.state_mismatch.title }).waitFor();
    expect(refusalLogged('state_mismatch', await requestIdOn(v))).toBe(true);
    expect((await victim.cookies(origin)).some((c) => c.name === DASHBOARD_SESSION_COOKIE)).toBe(false);
    // A state that differs from the one this browser sent is refused too.
    const tampered = new URL(callback);
    tampered.searchParams.set('state', 'x'.repeat(43));
    await a.goto(tampered.href);
    await a.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.state_mismatch.title }).waitFor();
    await attacker.close();
    await victim.close();
  });

  it('an unreachable provider shows a plain 503 page with the request id, never JSON, and logs why', async () => {
    const dead = await freePort();
    const other = await startTestServer({ logger, env: { OIDC_ISSUER: `http://127.0.0.1:${dead}`, OIDC_CLIENT_ID: 'reftrack' } });
    try {
      const context = await newContext();
      const p = await context.newPage();
      await p.goto(`${other.url}/sign-in`);
      await p.getByRole('link', { name: 'Sign in with 127.0.0.1' }).click();
      await p.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.provider_unreachable.title }).waitFor();
      const requestId = await requestIdOn(p);
      expect(refusalLogged('provider_unreachable', requestId)).toBe(true);
      const res = await other.get(SIGN_IN_PATHS.start);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.text).not.toMatch(/^\s*\{/);
      await context.close();
    } finally {
      await other.close();
    }
  });
});

describe(`[${dbKind}] reftrack login over the code flow`, () => {
  it('the built CLI prints a pairing code, the browser confirms the device and the code, signs in at the provider, and the CLI receives its token', async () => {
    const configDir = mkdtempSync(path.join(os.tmpdir(), 'reftrack-cli-'));
    const env: NodeJS.ProcessEnv = { ...process.env, REFTRACK_CONFIG_DIR: configDir, REFTRACK_BASE_URL: origin };
    delete env.CI;
    const cli = spawn(process.execPath, [CLI_BIN, 'login', '--no-browser'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    cli.stdout.on('data', (c: Buffer) => (out += c.toString()));
    cli.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number>((resolve) => cli.once('close', (code) => resolve(code ?? -1)));
    try {
      const deadline = Date.now() + 15_000;
      while (!/Pairing code: (\S+)/.test(out) || !/(http:\/\/\S+\/cli\/login\?state=\S+)/.test(out)) {
        if (Date.now() > deadline) throw new Error(`no login URL and pairing code from the CLI: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const code = /Pairing code: (\S+)/.exec(out)![1];
      const loginUrl = /(http:\/\/\S+\/cli\/login\?state=\S+)/.exec(out)![1];
      const context = await newContext();
      const p = await context.newPage();
      await p.goto(loginUrl);
      expect(await p.locator('#pairing-code').textContent()).toBe(code);
      expect(await p.locator('#device').textContent()).toContain(`(${process.platform}; ${os.hostname()}`);
      await p.getByRole('link', { name: CLI_LOGIN_CONFIRM.continueButton }).click();
      await signInAtProvider(p, 'alice');
      await p.getByText(CLI_LOGIN_CONFIRM.done).waitFor();
      expect(await exited).toBe(0);
      expect(out).toContain('Logged in to');
      expect(out).toContain('alice@corp.test');
      await context.close();
    } finally {
      cli.kill();
      rmSync(configDir, { recursive: true, force: true });
    }
  });

  it('a login link opened from another site cannot skip the confirmation', async () => {
    const start = await s.post('/api/v1/cli/auth/start', {});
    const context = await newContext();
    const p = await context.newPage();
    const res = await p.goto(`${origin}${SIGN_IN_PATHS.cliLogin}/continue?state=${start.body.data.state}&confirm=guess`);
    expect(res!.status()).toBe(403);
    await p.getByRole('heading', { level: 1, name: SIGN_IN_REFUSALS.cross_site.title }).waitFor();
    expect((await s.get(`/api/v1/cli/auth/poll?state=${start.body.data.state}`)).body.data.status).toBe('pending');
    await context.close();
  });
});

describe(`[${dbKind}] reftrack-server oidc check`, () => {
  const configFor = (env: Record<string, string>) => loadConfig({ PORT: '8787', OIDC_CLIENT_ID: CONFIDENTIAL.id, OIDC_CLIENT_SECRET: CONFIDENTIAL.secret, ...env });

  it('finds no problem with a correct configuration and prints what to register', async () => {
    const report = await checkOidc(configFor({ OIDC_ISSUER: provider.issuer }));
    expect(report.problems).toEqual([]);
    expect(report.register).toContain(`redirect URI (sign-in callback): http://localhost:8787${SIGN_IN_PATHS.callback}`);
    expect(report.register).toContain(`post-logout redirect URI: http://localhost:8787${SIGN_IN_PATHS.signedOut}`);
  });

  it('reports an issuer mismatch (a trailing slash) and an unreachable provider', async () => {
    expect((await checkOidc(configFor({ OIDC_ISSUER: `${provider.issuer}/` }))).problems[0]).toMatch(/^issuer mismatch: the provider says "http:\/\/127\.0\.0\.1:\d+", OIDC_ISSUER is "http:\/\/127\.0\.0\.1:\d+\/"/);
    expect((await checkOidc(configFor({ OIDC_ISSUER: `http://127.0.0.1:${await freePort()}` }))).problems[0]).toMatch(/^cannot fetch .*ECONNREFUSED/);
  });
});
