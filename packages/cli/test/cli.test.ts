/**
 * The built binary as a subprocess against a scripted local HTTP server: exit codes, JSON output,
 * stderr warnings and what is sent on the wire. The real server is covered by e2e.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ERRORS } from '@reftrack/contract';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collect, runCli, spawnCli, waitForEvent } from './helpers/run-cli.js';
import { platformError, startStub, type Stub } from './helpers/stub-server.js';

const KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
const program = { id: 7, name: 'Acme', domain: 'acme.test', commission_type: 'percent', commission_rate: 20, attribution_window_days: 60, lead_auth: 'server_required', api_token_masked: 'aff_…IJ01', advertiser_id: 1 };
const readiness = {
  program_id: 7,
  ready: false,
  key_status: 'active',
  rotate_by: null,
  checklist: [
    { key: 'click_seen', label: 'A real click was recorded', done: true, next_step: null },
    { key: 'sale_seen', label: 'A real sale was recorded', done: false, next_step: 'Call trackSale from your server.' },
  ],
};
const steps = (saleOk: boolean) => [
  { step: 'click', ok: true, status: 200, duration_ms: 12.4, detail: { click_id: 'clk_abc' } },
  { step: 'lead', ok: true, status: 200, duration_ms: 8, detail: {} },
  { step: 'sale', ok: saleOk, status: saleOk ? 200 : 400, duration_ms: 5, detail: saleOk ? { transaction_id: 'test_txn_1' } : { message: 'No affiliate attribution found' } },
];

let tmp: string;
let stubs: Stub[] = [];
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-cli-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  stubs = [];
});

async function stub(routes: Parameters<typeof startStub>[0]): Promise<Stub> {
  const s = await startStub(routes);
  stubs.push(s);
  return s;
}

const configDir = (name: string) => path.join(tmp, name);
const json = (text: string) => JSON.parse(text) as Record<string, any>;

describe('help, version and usage errors', () => {
  it('--help lists every command and documents the exit codes', async () => {
    const r = await runCli(['--help'], {});
    expect(r.code).toBe(0);
    for (const cmd of ['login', 'logout', 'whoami', 'init', 'programs', 'keys', 'status', 'test-event']) expect(r.stdout).toContain(cmd);
    expect(r.stdout).toMatch(/Exit codes:\n\s+0\s+success\n\s+1\s+failure[^\n]*\n\s+2\s+usage[^\n]*\n\s+3\s+authentication[^\n]*\n\s+4\s+rate limited/);
  });

  it('each command documents its flags', async () => {
    const init = await runCli(['init', '--help'], {});
    for (const flag of ['--name', '--domain', '--commission-type', '--commission-rate', '--advertiser-id', '--base-url', '--json']) expect(init.stdout).toContain(flag);
    const status = await runCli(['status', '--help'], {});
    expect(status.stdout).toContain('--api-key');
  });

  it('`help <command>` shows that command and exits 0', async () => {
    const r = await runCli(['help', 'test-event'], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: reftrack test-event');
  });

  it('--version prints the package version', async () => {
    const r = await runCli(['--version'], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
  });

  it('an unknown command or flag exits 2', async () => {
    expect((await runCli(['deploy'], {})).code).toBe(2);
    expect((await runCli(['status', '--nope'], {})).code).toBe(2);
    expect((await runCli([], {})).code).toBe(2);
  });

  it('in JSON mode a usage error is one JSON document on stdout and nothing else', async () => {
    const r = await runCli(['test-event', 'purchase', '--json'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('');
    expect(json(r.stdout).error).toMatchObject({ code: 'usage_error', status: null, exit_code: 2 });
  });

  it('init without a terminal and with missing flags is a usage error naming the flags', async () => {
    const r = await runCli(['init', '--json', '--name', 'Acme'], { REFTRACK_CONFIG_DIR: configDir('usage') });
    expect(r.code).toBe(2);
    const err = json(r.stdout).error;
    expect(err.message).toBe(ERRORS.cliInitMissingFields.message);
    expect(err.hint).toContain('--domain, --commission-type, --commission-rate');
  });

  it('status without a program key exits 3', async () => {
    const r = await runCli(['status', '--json', '--base-url', 'http://127.0.0.1:9'], {});
    expect(r.code).toBe(3);
    expect(json(r.stdout).error.code).toBe('missing_api_key');
  });
});

describe('login, whoami, init, programs, logout (scripted server)', () => {
  it('logs in, stores the token 0600, creates a program and lists programs with the login token', async () => {
    const dir = configDir('flow');
    const s = await stub({
      'POST /api/v1/cli/auth/start': () => ({ body: { success: true, data: { state: 'st_flow', login_url: 'http://127.0.0.1/cli/login?state=st_flow', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } }),
      'GET /api/v1/cli/auth/poll': (_r, n) => ({ body: { success: true, data: n < 2 ? { status: 'pending', expires_at: new Date(Date.now() + 300_000).toISOString() } : { status: 'complete', token: 'login_tok', account: { email: 'owner@acme.test', name: 'Ada Owner' } } } }),
      'POST /api/v1/cli/init': () => ({ body: { success: true, data: { program, api_key_instructions: 'A workspace owner generates the key in the dashboard: Program settings → API key.', next_steps: ['Add the tracker'] } } }),
      'GET /api/v1/cli/programs': () => ({ body: { success: true, data: [program] } }),
      'POST /api/v1/cli/auth/logout': () => ({ body: { success: true, data: { revoked: true, revoked_at: '2026-11-24T10:00:00.000Z' } } }),
    });
    const env = { REFTRACK_CONFIG_DIR: dir };

    const child = spawnCli(['login', '--no-browser', '--json', '--base-url', s.baseUrl], env);
    const done = collect(child);
    const started = await waitForEvent(child, 'login_started');
    expect(started).toMatchObject({ state: 'st_flow', login_url: 'http://127.0.0.1/cli/login?state=st_flow', base_url: s.baseUrl });
    const login = await done;
    expect(login.code).toBe(0);
    expect(json(login.stdout)).toMatchObject({ logged_in: true, account: { email: 'owner@acme.test', name: 'Ada Owner' }, base_url: s.baseUrl, state: 'st_flow' });
    expect(login.stdout).not.toContain('login_tok');
    const file = json(login.stdout).config_path as string;
    expect(path.dirname(file)).toBe(dir);
    if (process.platform !== 'win32') expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const who = await runCli(['whoami', '--json'], env);
    expect(who.code).toBe(0);
    expect(json(who.stdout)).toMatchObject({ account: { email: 'owner@acme.test' }, base_url: s.baseUrl });

    // No --base-url: the stored login's server is the default.
    const init = await runCli(['init', '--json', '--name', 'Acme', '--domain', 'acme.test', '--commission-type', 'percent', '--commission-rate', '20', '--advertiser-id', '1'], env);
    expect(init.code).toBe(0);
    const created = json(init.stdout);
    expect(created.program).toEqual(program);
    expect(created.tracker_snippet).toBe(`<script src="${s.baseUrl}/tracker.js" data-reftrack-program-id="7" defer></script>`);
    expect(created.api_key_instructions).toMatch(/Program settings/);
    expect(created.sdk_snippet).toContain('new Reftrack({ apiKey })');
    expect(created.sdk_snippet).toContain('trackLead({ clickId, customerExternalId })');
    expect(created.sdk_snippet).toContain('trackSale({ customerExternalId, amount, invoiceId })');
    const initReq = s.requests.find((r) => r.path === '/api/v1/cli/init')!;
    expect(initReq.headers.authorization).toBe('Bearer login_tok');
    expect(initReq.body).toEqual({ name: 'Acme', domain: 'acme.test', commission_type: 'percent', commission_rate: 20, advertiser_id: 1 });

    const human = await runCli(['init', '--name', 'Acme', '--domain', 'acme.test', '--commission-type', 'percent', '--commission-rate', '20'], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('data-reftrack-program-id="7"');
    expect(human.stdout).toContain('Program settings → API key');
    expect(human.stdout).toContain('reftrack.trackSale({ customerExternalId, amount, invoiceId })');

    const list = await runCli(['programs', '--json'], env);
    expect(list.code).toBe(0);
    expect(json(list.stdout).programs).toEqual([program]);
    const table = await runCli(['programs'], env);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+DOMAIN/);
    expect(table.stdout).toContain('aff_…IJ01');

    const out = await runCli(['logout', '--json'], env);
    expect(out.code).toBe(0);
    expect(json(out.stdout)).toEqual({ logged_out: true, revoked_on_server: true, revoked_at: '2026-11-24T10:00:00.000Z', base_url: s.baseUrl, config_path: file });
    expect(s.requests.find((r) => r.path === '/api/v1/cli/auth/logout')!.headers.authorization).toBe('Bearer login_tok');
    expect(fs.readFileSync(file, 'utf8')).not.toContain('login_tok');
    expect((await runCli(['programs', '--json'], env)).code).toBe(3);
  });

  it('never sends the login token to another server', async () => {
    const dir = configDir('mismatch');
    const home = await stub({
      'POST /api/v1/cli/auth/start': () => ({ body: { success: true, data: { state: 's', login_url: 'http://127.0.0.1/l', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } }),
      'GET /api/v1/cli/auth/poll': () => ({ body: { success: true, data: { status: 'complete', token: 'login_tok', account: { email: 'a@b.c', name: null } } } }),
    });
    const other = await stub({});
    expect((await runCli(['login', '--no-browser', '--json', '--base-url', home.baseUrl], { REFTRACK_CONFIG_DIR: dir })).code).toBe(0);
    const r = await runCli(['programs', '--json'], { REFTRACK_CONFIG_DIR: dir, REFTRACK_BASE_URL: other.baseUrl });
    expect(r.code).toBe(3);
    expect(json(r.stdout).error.code).toBe('login_server_mismatch');
    expect(other.requests).toHaveLength(0);
  });

  it('a 401 on programs says to log in again (exit 3)', async () => {
    const dir = configDir('expired-token');
    const s = await stub({
      'POST /api/v1/cli/auth/start': () => ({ body: { success: true, data: { state: 's', login_url: 'http://127.0.0.1/l', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } }),
      'GET /api/v1/cli/auth/poll': () => ({ body: { success: true, data: { status: 'complete', token: 'old', account: { email: 'a@b.c', name: null } } } }),
      'GET /api/v1/cli/programs': () => ({ status: 401, body: platformError(401, 'UnauthorizedError', ERRORS.cliProgramsInvalidToken.message) }),
    });
    await runCli(['login', '--no-browser', '--base-url', s.baseUrl], { REFTRACK_CONFIG_DIR: dir });
    const r = await runCli(['programs'], { REFTRACK_CONFIG_DIR: dir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`Error: unauthorized (HTTP 401): ${ERRORS.cliProgramsInvalidToken.message}`);
    expect(r.stderr).toMatch(/Hint: Run `reftrack login`/);
  });

  it('login fails with exit 1 when the session expires', async () => {
    const s = await stub({
      'POST /api/v1/cli/auth/start': () => ({ body: { success: true, data: { state: 's', login_url: 'http://127.0.0.1/l', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } }),
      'GET /api/v1/cli/auth/poll': () => ({ body: { success: true, data: { status: 'expired' } } }),
    });
    const r = await runCli(['login', '--no-browser', '--json', '--base-url', s.baseUrl], { REFTRACK_CONFIG_DIR: configDir('expired') });
    expect(r.code).toBe(1);
    expect(json(r.stdout).error.code).toBe('login_expired');
  });

  it('human login prints the sign-in address and the state on stderr, and no spinner without a terminal', async () => {
    const s = await stub({
      'POST /api/v1/cli/auth/start': () => ({ body: { success: true, data: { state: 'st_h', login_url: 'http://127.0.0.1/cli/login?state=st_h', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } }),
      'GET /api/v1/cli/auth/poll': () => ({ body: { success: true, data: { status: 'complete', token: 't', account: { email: 'a@b.c', name: null } } } }),
    });
    const r = await runCli(['login', '--no-browser', '--base-url', s.baseUrl], { REFTRACK_CONFIG_DIR: configDir('human') });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('http://127.0.0.1/cli/login?state=st_h');
    expect(r.stderr).toContain('st_h');
    expect(r.stderr).not.toContain('⠋');
    expect(r.stdout).toContain('Logged in to');
  });
});

describe('logout revokes the token on the server', () => {
  const startRoute = () => ({ body: { success: true, data: { state: 's', login_url: 'http://127.0.0.1/l', expires_at: new Date(Date.now() + 300_000).toISOString(), poll_interval_seconds: 0.1 } } });
  const pollRoute = () => ({ body: { success: true, data: { status: 'complete', token: 'tok_logout', account: { email: 'ada@acme.test', name: null } } } });

  /** Logs in against a stub answering logout with `reply`; returns the stub and the login folder. */
  async function loggedIn(name: string, reply?: Parameters<typeof startStub>[0][string]) {
    const s = await stub({ 'POST /api/v1/cli/auth/start': startRoute, 'GET /api/v1/cli/auth/poll': pollRoute, ...(reply ? { 'POST /api/v1/cli/auth/logout': reply } : {}) });
    const env = { REFTRACK_CONFIG_DIR: configDir(name) };
    expect((await runCli(['login', '--no-browser', '--base-url', s.baseUrl], env)).code).toBe(0);
    return { s, env };
  }
  const stored = (env: { REFTRACK_CONFIG_DIR: string }) => fs.readFileSync(path.join(env.REFTRACK_CONFIG_DIR, 'config.json'), 'utf8');

  it('human: says the token was revoked on the server and removed here', async () => {
    const { s, env } = await loggedIn('logout-ok', () => ({ body: { success: true, data: { revoked: true, revoked_at: '2026-11-24T10:00:00.000Z' } } }));
    const r = await runCli(['logout'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`Logged out of ${s.baseUrl}: the login token was revoked on the server and removed from ${path.join(env.REFTRACK_CONFIG_DIR, 'config.json')}.\n`);
    expect(stored(env)).not.toContain('tok_logout');
  });

  it('a server that is down: the local token is removed, but the command says it was NOT revoked, how to revoke it, and exits 1', async () => {
    const { s, env } = await loggedIn('logout-down');
    const url = s.baseUrl;
    await s.close();
    stubs = [];
    const r = await runCli(['logout', '--json'], env);
    expect(r.code).toBe(1);
    expect(json(r.stdout)).toMatchObject({ logged_out: true, revoked_on_server: false, revoked_at: null, base_url: url });
    const event = JSON.parse(r.stderr.trim());
    expect(event).toMatchObject({ event: 'error', code: 'not_revoked', exit_code: 1 });
    expect(event.message).toContain(`NOT revoked on ${url}`);
    expect(event.message).toContain('network_error');
    expect(event.hint).toContain(`${url}/access`);
    expect(event.hint).toContain('reftrack-server cli-tokens revoke --email ada@acme.test');
    expect(stored(env)).not.toContain('tok_logout');
    expect((await runCli(['whoami', '--json'], env)).code).toBe(3);
  });

  it('a server failure or an older server without the route: NOT revoked, exit 1, in human words on stderr', async () => {
    for (const [name, reply] of [
      ['logout-500', () => ({ status: 500, body: platformError(500, 'InternalServerError', 'Failed to revoke the login token (request_id: r1)') })],
      ['logout-old', undefined],
      ['logout-odd', () => ({ body: { success: true, data: { revoked: 'maybe' } } })],
    ] as const) {
      const { env } = await loggedIn(name, reply);
      const r = await runCli(['logout'], env);
      expect(r.code, name).toBe(1);
      expect(r.stdout, name).toMatch(/^Logged out on this machine only: the login token was removed from /);
      expect(r.stderr, name).toMatch(/^Error: not_revoked: The login token was NOT revoked on http:\/\/127\.0\.0\.1:\d+ \(/);
      expect(r.stderr, name).toMatch(/Hint: Revoke it in the dashboard: http:\/\/127\.0\.0\.1:\d+\/access/);
      expect(stored(env), name).not.toContain('tok_logout');
    }
  });

  it('a token the server no longer accepts (401: expired or revoked elsewhere) has nothing left to revoke: exit 0', async () => {
    const refused = () => ({ status: 401, body: platformError(401, 'UnauthorizedError', ERRORS.cliLogoutInvalidToken.message) });
    const { env } = await loggedIn('logout-401', refused);
    const r = await runCli(['logout', '--json'], env);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ logged_out: true, revoked_on_server: false, revoked_at: null });
    expect(stored(env)).not.toContain('tok_logout');
    const { env: env2 } = await loggedIn('logout-401-human', refused);
    const human = await runCli(['logout'], env2);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('the server no longer accepted the login token (expired or already revoked), so there was nothing to revoke there');
    expect(human.stderr).toBe('');
  });

  it('not logged in: nothing to remove, nothing sent', async () => {
    const r = await runCli(['logout', '--json'], { REFTRACK_CONFIG_DIR: configDir('logout-none') });
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ logged_out: false, revoked_on_server: false, base_url: null });
  });
});

describe('status and test-event (program key)', () => {
  const statusBody = { success: true, data: { program, key: { state: 'active', rotate_by: null }, readiness } };

  it('status sends the program key and prints the checklist', async () => {
    const s = await stub({ 'GET /api/v1/cli/status': () => ({ body: statusBody }) });
    const r = await runCli(['status', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(r.code).toBe(0);
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(r.stdout).toContain('Program 7 "Acme"');
    expect(r.stdout).toContain('[x] A real click was recorded');
    expect(r.stdout).toContain('[ ] A real sale was recorded');
    expect(r.stdout).toContain('→ Call trackSale from your server.');
    const j = await runCli(['status', '--json', '--api-key', KEY, '--base-url', s.baseUrl], {});
    expect(json(j.stdout)).toEqual(statusBody.data);
  });

  it('prints rotation warnings on stderr and keeps them in the JSON document', async () => {
    const warning = { code: 'api_key_rotation_required', message: 'This API key is marked for mandatory rotation and stops working at 2030-01-01T00:00:00.000Z.', hint: 'Regenerate it.', rotate_by: '2030-01-01T00:00:00.000Z', docs_url: 'http://x/docs/errors#api_key_rotation_required' };
    const s = await stub({ 'GET /api/v1/cli/status': () => ({ headers: { Deprecation: '@1700000000', Sunset: 'Tue, 01 Jan 2030 00:00:00 GMT' }, body: { ...statusBody, warnings: [warning] } }) });
    const human = await runCli(['status', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(human.code).toBe(0);
    expect(human.stderr).toContain(`Warning: api_key_rotation_required: ${warning.message}`);
    expect(human.stderr).toContain('Regenerate it.');
    const j = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(json(j.stdout).warnings).toEqual([warning]);
    expect(JSON.parse(j.stderr.trim())).toMatchObject({ event: 'warning', code: 'api_key_rotation_required' });
  });

  it('warns from the Deprecation/Sunset headers when the body has no warnings', async () => {
    const s = await stub({ 'GET /api/v1/cli/status': () => ({ headers: { Deprecation: '@1700000000', Sunset: 'Tue, 01 Jan 2030 00:00:00 GMT' }, body: statusBody }) });
    const r = await runCli(['status', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(r.stderr).toContain('stops working at 2030-01-01T00:00:00.000Z');
  });

  it('a wrong key exits 3 with a key hint; a retired key exits 3 with the server hint', async () => {
    const s = await stub({
      'GET /api/v1/cli/status': (_r, n) =>
        n === 0
          ? { status: 401, body: platformError(401, 'UnauthorizedError', ERRORS.cliKeyInvalid.message) }
          : { status: 401, headers: { Sunset: 'Tue, 01 Jan 2030 00:00:00 GMT', Deprecation: '@1' }, body: { error: { code: 'api_key_rotation_required', message: 'This API key was retired on 2030-01-01T00:00:00.000Z and no longer authenticates.', hint: ERRORS.keyRotationRequired.hint, docs_url: 'http://x' } } },
    });
    const wrong = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', 'aff_wrong'], {});
    expect(wrong.code).toBe(3);
    expect(json(wrong.stdout).error).toMatchObject({ code: 'unauthorized', status: 401, exit_code: 3, message: ERRORS.cliKeyInvalid.message });
    expect(json(wrong.stdout).error.hint).toMatch(/REFTRACK_API_KEY/);
    const retired = await runCli(['status', '--base-url', s.baseUrl, '--api-key', 'aff_old'], {});
    expect(retired.code).toBe(3);
    expect(retired.stderr).toMatch(/^Error: api_key_rotation_required \(HTTP 401\): This API key was retired/);
    expect(retired.stderr).toContain(ERRORS.keyRotationRequired.hint);
  });

  it('test-event click sends event_type and prints the event', async () => {
    const s = await stub({ 'POST /api/v1/cli/test-event': () => ({ body: { success: true, data: { event_type: 'click', event_id: 41, test_mode: true, click_id: 'clk_t' } } }) });
    const r = await runCli(['test-event', 'click', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(r.code).toBe(0);
    expect(s.requests[0]!.body).toEqual({ event_type: 'click' });
    expect(json(r.stdout)).toEqual({ event_type: 'click', event_id: 41, test_mode: true, click_id: 'clk_t' });
  });

  it('a passing chain prints each step with its timing and exits 0', async () => {
    const s = await stub({ 'POST /api/v1/cli/test-event': () => ({ body: { success: true, data: { chain_id: 'ch_1', passed: true, steps: steps(true), chains_remaining_this_hour: 9 } } }) });
    const r = await runCli(['test-event', 'chain', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(r.code).toBe(0);
    expect(s.requests[0]!.body).toEqual({ type: 'chain' });
    expect(r.stdout).toMatch(/PASS\s+click\s+HTTP 200\s+12 ms\s+click_id=clk_abc/);
    expect(r.stdout).toMatch(/PASS\s+sale\s+HTTP 200\s+5 ms/);
    expect(r.stdout).toContain('PASSED');
  });

  it('a failed chain exits 1 and stays one JSON document on stdout', async () => {
    const s = await stub({ 'POST /api/v1/cli/test-event': () => ({ body: { success: true, data: { chain_id: 'ch_2', passed: false, steps: steps(false), chains_remaining_this_hour: 8 } } }) });
    const r = await runCli(['test-event', 'chain', '--json', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(r.code).toBe(1);
    const doc = json(r.stdout);
    expect(doc.passed).toBe(false);
    expect(doc.steps.map((x: { ok: boolean }) => x.ok)).toEqual([true, true, false]);
    expect(JSON.parse(r.stderr.trim())).toMatchObject({ event: 'error', code: 'chain_failed', exit_code: 1 });
    const human = await runCli(['test-event', 'chain', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/FAIL\s+sale\s+HTTP 400/);
    expect(human.stderr).toContain('Error: chain_failed: The synthetic chain failed at the sale step (HTTP 400).');
  });

  it('the chain cap (429) exits 4 with the wait', async () => {
    const s = await stub({ 'POST /api/v1/cli/test-event': () => ({ status: 429, headers: { 'Retry-After': '1200' }, body: { error: { status: 429, code: 'rate_limited', message: ERRORS.cliChainCap.message, retry_after_seconds: 1200 } } }) });
    const r = await runCli(['test-event', 'chain', '--json', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(r.code).toBe(4);
    expect(json(r.stdout).error).toMatchObject({ code: 'rate_limited', status: 429, exit_code: 4, retry_after_seconds: 1200, message: ERRORS.cliChainCap.message });
  });

  it('a server that is down exits 1 with network_error', async () => {
    const s = await stub({});
    const url = s.baseUrl;
    await s.close();
    stubs = [];
    const r = await runCli(['status', '--json', '--base-url', url, '--api-key', KEY], {});
    expect(r.code).toBe(1);
    expect(json(r.stdout).error.code).toBe('network_error');
  });

  it('an address that is not a Reftrack server (a web page\'s 404) says so, naming the address', async () => {
    const page = { status: 404, headers: { 'Content-Type': 'text/html; charset=utf-8' }, body: '<!doctype html><title>404 Not Found</title><h1>Not Found</h1>' };
    const s = await stub({ 'GET /api/v1/cli/status': () => page, 'POST /api/v1/cli/test-event': () => page });
    const r = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(r.code).toBe(1);
    expect(json(r.stdout).error).toMatchObject({
      code: 'not_reftrack_server',
      status: 404,
      message: `${s.baseUrl} does not look like a Reftrack server: GET /api/v1/cli/status answered HTTP 404 (text/html) without Reftrack's JSON envelope.`,
    });
    expect(json(r.stdout).error.hint).toContain('Check --base-url or REFTRACK_BASE_URL');
    const human = await runCli(['test-event', 'chain', '--base-url', s.baseUrl], { REFTRACK_API_KEY: KEY });
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`${s.baseUrl} does not look like a Reftrack server`);
    expect(human.stderr).not.toContain('without an error message');
  });

  it('a JSON 404 without the envelope and a 200 web page are not Reftrack answers either', async () => {
    const s = await stub({
      'GET /api/v1/cli/status': () => ({ status: 404, body: { message: 'Cannot GET /api/v1/cli/status' } }),
      'GET /api/v1/cli/programs': () => ({ status: 200, headers: { 'Content-Type': 'text/html' }, body: '<!doctype html><title>Home</title>' }),
    });
    const status = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(json(status.stdout).error).toMatchObject({ code: 'not_reftrack_server', status: 404 });
    fs.mkdirSync(configDir('not-reftrack'), { recursive: true });
    fs.writeFileSync(path.join(configDir('not-reftrack'), 'config.json'), JSON.stringify({ login: { token: 'tok', account: { email: 'a@b.c', name: null }, base_url: s.baseUrl, logged_in_at: '2026-01-01T00:00:00.000Z' } }), { mode: 0o600 });
    const programs = await runCli(['programs', '--json'], { REFTRACK_CONFIG_DIR: configDir('not-reftrack') });
    expect(programs.code).toBe(1);
    expect(json(programs.stdout).error).toMatchObject({ code: 'not_reftrack_server', status: 200, message: expect.stringContaining('answered HTTP 200 (text/html)') });
  });

  it('a 200 that is not a Reftrack answer exits 1 with invalid_response naming the field', async () => {
    const s = await stub({ 'GET /api/v1/cli/status': () => ({ body: { success: true, data: { program: { id: 'seven' } } } }) });
    const r = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(r.code).toBe(1);
    expect(json(r.stdout).error).toMatchObject({ code: 'invalid_response' });
    expect(json(r.stdout).error.message).toContain('body.data.program.id');
  });
});
