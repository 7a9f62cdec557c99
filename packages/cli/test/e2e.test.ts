/**
 * End to end: the built `reftrack` binary against the real server (apps/server), both as
 * subprocesses. The test plays the browser: it reads the login state from the CLI's JSON events
 * and completes the sign-in itself with a development id_token.
 *
 * Skipped, with a message, only while the server has no CLI routes (auth/start answers 404).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ERRORS, LIMITS, ROUTES } from '@reftrack/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { cleanEnv, collect, PACKAGE_ROOT, runCli, spawnCli, waitForEvent } from './helpers/run-cli.js';

const SERVER_MAIN = path.resolve(PACKAGE_ROOT, '../../apps/server/dist/main.js');
const FIXTURE = path.join(PACKAGE_ROOT, 'test/fixtures/e2e-fixture.json');
const PROGRAM_KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
const SKIP_NOTE = `the server has no CLI routes yet (POST ${ROUTES.cliAuthStart.path} answered 404); end-to-end CLI tests skipped`;

let tmp = '';
let baseUrl = '';
let serverEnv: NodeJS.ProcessEnv = {};
let server: ChildProcess | undefined;
let serverLog = '';
let cliRoutes = false;
let cliEnv: Record<string, string> = {};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function serverCommand(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [SERVER_MAIN, ...args], { env: serverEnv, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`reftrack-server ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

async function waitForHealth(deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (server?.exitCode !== null) throw new Error(`the server exited (${server?.exitCode}) before answering /healthz:\n${serverLog}`);
    try {
      const res = await fetch(`${baseUrl}${ROUTES.healthz.path}`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer /healthz within ${deadlineMs} ms:\n${serverLog}`);
}

const json = (text: string) => JSON.parse(text) as Record<string, any>;

function requireCliRoutes(ctx: TestContext): void {
  if (!cliRoutes) ctx.skip(SKIP_NOTE);
}

beforeAll(async () => {
  if (!fs.existsSync(SERVER_MAIN)) throw new Error(`${SERVER_MAIN} is missing: build the server first (pnpm build at the repository root).`);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-cli-e2e-'));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  // The development identity provider is active only without OIDC_ISSUER; Redis is left out so the
  // run depends on nothing outside its temporary folder.
  const { OIDC_ISSUER: _issuer, OIDC_AUDIENCE: _audience, REDIS_URL: _redis, ...inherited } = cleanEnv({});
  serverEnv = { ...inherited, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${path.join(tmp, 'cli.db')}`, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
  cliEnv = { REFTRACK_CONFIG_DIR: path.join(tmp, 'config'), REFTRACK_BASE_URL: baseUrl };

  await serverCommand(['seed', '--file', FIXTURE]);
  server = spawn(process.execPath, [SERVER_MAIN, 'start'], { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (c: Buffer) => (serverLog += c.toString('utf8')));
  server.stderr!.on('data', (c: Buffer) => (serverLog += c.toString('utf8')));
  await waitForHealth(30_000);

  const probe = await fetch(`${baseUrl}${ROUTES.cliAuthStart.path}`, { method: 'POST', signal: AbortSignal.timeout(5_000) });
  cliRoutes = probe.status !== 404;
  if (!cliRoutes) console.warn(`[cli e2e] ${SKIP_NOTE}`);
});

afterEach((ctx) => {
  // A failure here is often the server's (a crash, a migration); its log says which.
  if (ctx.task.result?.state === 'fail' && serverLog) console.error(`[cli e2e] server log (last 4000 chars):\n${serverLog.slice(-4_000)}`);
  if (ctx.task.result?.state === 'fail' && server && server.exitCode !== null) console.error(`[cli e2e] the server exited with ${server.exitCode}`);
});

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once('exit', r));
    server.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (server.exitCode === null) server.kill('SIGKILL');
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('reftrack against the real server', () => {
  let loginState = '';

  it('login: the CLI prints the state, the "browser" completes the callback, the token is stored 0600', async (ctx) => {
    requireCliRoutes(ctx);
    const idToken = (await serverCommand(['dev-token', '--email', 'owner@acme.test'])).trim().split('\n').pop()!.trim();
    expect(idToken).not.toBe('');

    const child = spawnCli(['login', '--no-browser', '--json'], cliEnv);
    const done = collect(child);
    const started = await waitForEvent(child, 'login_started');
    loginState = started.state as string;
    expect(typeof loginState).toBe('string');
    expect(started.login_url).toMatch(/^https?:\/\//);
    expect(started.base_url).toBe(baseUrl);

    const callback = await fetch(`${baseUrl}${ROUTES.cliAuthCallback.path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ state: loginState, id_token: idToken }),
    });
    expect(callback.status, await callback.clone().text()).toBe(200);

    const login = await done;
    expect(login.code, login.stderr + login.stdout).toBe(0);
    const doc = json(login.stdout);
    expect(doc).toMatchObject({ logged_in: true, account: { email: 'owner@acme.test' }, base_url: baseUrl, state: loginState });
    if (process.platform !== 'win32') expect(fs.statSync(doc.config_path).mode & 0o777).toBe(0o600);
  });

  it('the login token was handed out once: a second poll answers "Session already consumed"', async (ctx) => {
    requireCliRoutes(ctx);
    const res = await fetch(`${baseUrl}${ROUTES.cliAuthPoll.path}?state=${encodeURIComponent(loginState)}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(ERRORS.cliPollConsumed.message);
  });

  it('whoami shows the stored account and server', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['whoami', '--json'], cliEnv);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ logged_in: true, account: { email: 'owner@acme.test', name: 'Ada Owner' }, base_url: baseUrl });
  });

  let createdId = 0;
  it('init --json with flags creates a program and prints the next steps', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['init', '--json', '--name', 'Acme Two', '--domain', 'two.acme.test', '--commission-type', 'recurring_percent', '--commission-rate', '15'], cliEnv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = json(r.stdout);
    expect(doc.program).toMatchObject({ name: 'Acme Two', domain: 'two.acme.test', commission_type: 'recurring_percent', commission_rate: 15 });
    expect(Number.isInteger(doc.program.id)).toBe(true);
    createdId = doc.program.id;
    expect(typeof doc.api_key_instructions).toBe('string');
    expect(doc.api_key_instructions.length).toBeGreaterThan(0);
    expect(Array.isArray(doc.next_steps)).toBe(true);
    expect(doc.tracker_snippet).toBe(`<script src="${baseUrl}/tracker.js" data-reftrack-program-id="${createdId}" defer></script>`);
    expect(doc.sdk_snippet).toContain('new Reftrack({ apiKey })');
    // Creation never reveals the key (5.1).
    expect(r.stdout).not.toMatch(/aff_[A-Za-z0-9]{32,}/);
  });

  it('init refuses invalid input locally with the server message and exit 2', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['init', '--json', '--name', 'X', '--domain', 'x.test', '--commission-type', 'percent', '--commission-rate', '-3'], cliEnv);
    expect(r.code).toBe(2);
    expect(json(r.stdout).error.message).toBe(ERRORS.cliInitCommissionRate.message);
  });

  it('programs --json lists the seeded and the new program, keys masked', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['programs', '--json'], cliEnv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const list = json(r.stdout).programs as Array<Record<string, any>>;
    const seeded = list.find((p) => p.id === 1);
    expect(seeded).toMatchObject({ name: 'Acme', domain: 'acme.test', commission_type: 'percent', commission_rate: 20, attribution_window_days: 60, lead_auth: 'server_required' });
    expect(seeded!.api_token_masked).toContain(PROGRAM_KEY.slice(-LIMITS.maskedKeyVisibleChars));
    expect(list.some((p) => p.id === createdId)).toBe(true);
    expect(r.stdout).not.toContain(PROGRAM_KEY);
  });

  it('status --json --api-key reports program 1, its key state and the readiness checklist', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['status', '--json', '--api-key', PROGRAM_KEY], cliEnv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = json(r.stdout);
    expect(doc.program).toMatchObject({ id: 1, name: 'Acme', domain: 'acme.test' });
    expect(doc.key.state).toBe('active');
    expect(doc.readiness.program_id).toBe(1);
    expect(typeof doc.readiness.ready).toBe('boolean');
    expect(Array.isArray(doc.readiness.checklist)).toBe(true);
    expect(doc.warnings).toBeUndefined();
  });

  it('test-event click records a test click', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['test-event', 'click', '--json'], { ...cliEnv, REFTRACK_API_KEY: PROGRAM_KEY });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(json(r.stdout)).toMatchObject({ event_type: 'click', test_mode: true });
  });

  it('test-event chain --json passes with every step timed, exit 0', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['test-event', 'chain', '--json'], { ...cliEnv, REFTRACK_API_KEY: PROGRAM_KEY });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = json(r.stdout);
    expect(doc.passed).toBe(true);
    expect(typeof doc.chain_id).toBe('string');
    expect(doc.steps.map((s: { step: string }) => s.step)).toEqual(['click', 'lead', 'sale']);
    for (const step of doc.steps) {
      expect(step.ok).toBe(true);
      expect(step.status).toBeGreaterThanOrEqual(200);
      expect(step.status).toBeLessThan(300);
      expect(step.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(doc.chains_remaining_this_hour).toBeGreaterThanOrEqual(0);
    expect(doc.chains_remaining_this_hour).toBeLessThan(LIMITS.syntheticChainsPerHour);
  });

  it('a wrong program key exits 3 with the server message and a key hint', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['status', '--json', '--api-key', 'aff_wrongwrongwrongwrongwrongwrong00'], cliEnv);
    expect(r.code).toBe(3);
    const err = json(r.stdout).error;
    expect(err).toMatchObject({ status: 401, exit_code: 3, message: ERRORS.cliKeyInvalid.message });
    expect(err.hint).toMatch(/REFTRACK_API_KEY/);
  });

  let cliKey = '';
  it('keys generate: the first key of a program made by init comes at once, shown once, and works for status and the chain', async (ctx) => {
    requireCliRoutes(ctx);
    const before = json((await runCli(['programs', '--json'], cliEnv)).stdout).programs.find((p: { id: number }) => p.id === createdId);
    expect(before.api_key_revealed_at).toBeNull();
    const human = await runCli(['programs'], cliEnv);
    expect(human.stdout).toContain(`not generated (reftrack keys generate ${createdId})`);

    const r = await runCli(['keys', 'generate', String(createdId), '--json'], cliEnv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = json(r.stdout);
    expect(doc).toMatchObject({ program_id: createdId, replaced: false, note: 'Store this key now: it is shown only once.' });
    cliKey = doc.api_key;
    expect(cliKey).toMatch(/^aff_[A-Za-z0-9]{32,}$/);
    expect(doc.api_token_masked).toContain(cliKey.slice(-4));

    const status = await runCli(['status', '--json'], { ...cliEnv, REFTRACK_API_KEY: cliKey });
    expect(status.code, status.stdout + status.stderr).toBe(0);
    expect(json(status.stdout).program.id).toBe(createdId);
    const chain = await runCli(['test-event', 'chain', '--json'], { ...cliEnv, REFTRACK_API_KEY: cliKey });
    expect(chain.code, chain.stdout + chain.stderr).toBe(0);
    const after = json((await runCli(['programs', '--json'], cliEnv)).stdout).programs.find((p: { id: number }) => p.id === createdId);
    expect(after.api_key_revealed_at).not.toBeNull();
  });

  it('keys generate on a key that was shown asks first: without a terminal or --yes it changes nothing (exit 2)', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['keys', 'generate', String(createdId), '--json'], cliEnv);
    expect(r.code).toBe(2);
    const err = json(r.stdout).error;
    expect(err.code).toBe('usage_error');
    expect(err.message).toContain('already has a key that was shown');
    expect(err.message).toContain('A new key stops it at once');
    expect(err.hint).toContain('--yes');
    expect((await runCli(['status', '--json'], { ...cliEnv, REFTRACK_API_KEY: cliKey })).code).toBe(0);
  });

  it('keys generate --yes replaces a shown key: the old one stops at once (exit 3 on status), the new one works', async (ctx) => {
    requireCliRoutes(ctx);
    const r = await runCli(['keys', 'generate', String(createdId), '--yes'], cliEnv);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`New key for program ${createdId} "Acme Two", shown only once:`);
    expect(r.stdout).toContain('The previous key stopped working at this moment.');
    const fresh = r.stdout.match(/aff_[A-Za-z0-9]{32,}/)![0];
    expect(fresh).not.toBe(cliKey);
    expect((await runCli(['status', '--json'], { ...cliEnv, REFTRACK_API_KEY: cliKey })).code).toBe(3);
    expect((await runCli(['status', '--json'], { ...cliEnv, REFTRACK_API_KEY: fresh })).code).toBe(0);
  });

  it('keys generate names a program outside the account, and refuses a bad id as usage', async (ctx) => {
    requireCliRoutes(ctx);
    const missing = await runCli(['keys', 'generate', '999999', '--json'], cliEnv);
    expect(missing.code).toBe(1);
    expect(json(missing.stdout).error).toMatchObject({ code: 'program_not_found', message: `Program 999999 is not among the programs of owner@acme.test on ${baseUrl}.` });
    const bad = await runCli(['keys', 'generate', 'abc', '--json'], cliEnv);
    expect(bad.code).toBe(2);
  });

  it('webhooks: create prints the signing secret once; list, test, deliveries, update, rotate-secret and delete work with the login token', async (ctx) => {
    requireCliRoutes(ctx);
    const made = await runCli(['webhooks', 'create', 'https://hooks.example.com/reftrack', '--events', 'sale.created,commission.created', '--json'], cliEnv);
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const endpoint = json(made.stdout);
    expect(endpoint).toMatchObject({ url: 'https://hooks.example.com/reftrack', event_types: ['sale.created', 'commission.created'], enabled: true });
    expect(endpoint.secret).toMatch(/^whsec_/);
    const list = await runCli(['webhooks', 'list'], cliEnv);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('https://hooks.example.com/reftrack');
    expect(list.stdout).not.toContain(endpoint.secret);
    const test = json((await runCli(['webhooks', 'test', String(endpoint.id), '--json'], cliEnv)).stdout);
    expect(test).toMatchObject({ endpoint_id: endpoint.id, event_type: 'webhook.test' });
    const log = json((await runCli(['webhooks', 'deliveries', String(endpoint.id), '--json'], cliEnv)).stdout);
    expect(log.deliveries.map((d: { message_id: string }) => d.message_id)).toContain(test.message_id);
    const off = json((await runCli(['webhooks', 'update', String(endpoint.id), '--disable', '--json'], cliEnv)).stdout);
    expect(off.enabled).toBe(false);
    const rotated = json((await runCli(['webhooks', 'rotate-secret', String(endpoint.id), '--json'], cliEnv)).stdout);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect((await runCli(['webhooks', 'delete', String(endpoint.id)], cliEnv)).code).toBe(0);
    const bad = await runCli(['webhooks', 'create', 'https://x.example.com', '--events', 'nope', '--json'], cliEnv);
    expect(bad.code).toBe(2);
    expect(json(bad.stdout).error.message).toMatch(/^--events must be a comma-separated list of: lead.created/);
  });

  it('logout revokes the token on the server and removes it here; programs then asks to log in (exit 3)', async (ctx) => {
    requireCliRoutes(ctx);
    const token = (JSON.parse(fs.readFileSync(path.join(cliEnv.REFTRACK_CONFIG_DIR, 'config.json'), 'utf8')) as { login: { token: string } }).login.token;
    const before = await fetch(`${baseUrl}${ROUTES.cliPrograms.path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(before.status).toBe(200);
    const out = await runCli(['logout', '--json'], cliEnv);
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(json(out.stdout)).toMatchObject({ logged_out: true, revoked_on_server: true, revoked_at: expect.any(String), base_url: baseUrl });
    // The token is refused by the server now, not only forgotten by the CLI.
    const after = await fetch(`${baseUrl}${ROUTES.cliPrograms.path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { message: string } }).error.message).toBe(ERRORS.cliProgramsInvalidToken.message);
    const r = await runCli(['programs', '--json'], cliEnv);
    expect(r.code).toBe(3);
    expect(json(r.stdout).error.code).toBe('not_logged_in');
  });
});
