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
    for (const cmd of ['login', 'logout', 'whoami', 'init', 'programs', 'status', 'test-event']) expect(r.stdout).toContain(cmd);
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
    expect(json(out.stdout)).toMatchObject({ logged_out: true, base_url: s.baseUrl });
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

  it('a 200 that is not a Reftrack answer exits 1 with invalid_response naming the field', async () => {
    const s = await stub({ 'GET /api/v1/cli/status': () => ({ body: { success: true, data: { program: { id: 'seven' } } } }) });
    const r = await runCli(['status', '--json', '--base-url', s.baseUrl, '--api-key', KEY], {});
    expect(r.code).toBe(1);
    expect(json(r.stdout).error).toMatchObject({ code: 'invalid_response' });
    expect(json(r.stdout).error.message).toContain('body.data.program.id');
  });
});
