/**
 * The SDK against the real Reftrack server (apps/server/dist/main.js), seeded from a fixture and
 * started on a free port with its own SQLite file. Skipped only when the server is not built.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@reftrack/contract';
import { AuthenticationError, InvalidRequestError, NotFoundError, Reftrack, handleReferral, type ReftrackWarning } from '../src/index.js';

const SERVER_MAIN = fileURLToPath(new URL('../../../apps/server/dist/main.js', import.meta.url));
const SERVER_BUILT = existsSync(SERVER_MAIN);
const API_KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
const FIXTURE = {
  accounts: [{ email: 'owner@acme.test', name: 'Ada Owner' }],
  workspaces: [{ id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }] }],
  programs: [
    {
      id: 1,
      workspace: 1,
      name: 'Acme',
      domain: 'acme.test',
      commission_type: 'percent',
      commission_rate: 20,
      attribution_window_days: 60,
      lead_auth: 'server_required',
      api_key: API_KEY,
    },
  ],
  partners: [{ id: 1, name: 'Pat Partner', email: 'pat@partner.test', code: 'pat' }],
  enrollments: [{ partner: 1, program: 1 }],
  links: [{ short_link: 'pat20', partner: 1, program: 1, active: true }],
};

if (!SERVER_BUILT) {
  console.warn(`[integration] skipped: ${SERVER_MAIN} does not exist. Build apps/server (pnpm --filter @reftrack/server build) and run again.`);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe.skipIf(!SERVER_BUILT)('against the real server', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;
  let server: ChildProcess | undefined;
  let serverLog = '';
  const warnings: ReftrackWarning[] = [];
  let client: Reftrack;

  const runCommand = async (...args: string[]) => {
    try {
      return await promisify(execFile)(process.execPath, [SERVER_MAIN, ...args], { env, timeout: 60_000 });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`reftrack-server ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'reftrack-sdk-'));
    const fixtureFile = join(dir, 'fixture.json');
    writeFileSync(fixtureFile, JSON.stringify(FIXTURE));
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dir, 'sdk.db')}`, PUBLIC_BASE_URL: baseUrl, LOG_LEVEL: 'warn' };
    delete env.REDIS_URL;

    await runCommand('seed', '--file', fixtureFile);

    server = spawn(process.execPath, [SERVER_MAIN, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
    server.stderr?.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}:\n${serverLog}`);
      const up = await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false);
      if (up) break;
      if (Date.now() > deadline) throw new Error(`server did not answer /healthz within 30 s:\n${serverLog}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    client = new Reftrack({ apiKey: API_KEY, baseUrl, onWarning: (w) => warnings.push(w) });
  });

  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const invoiceId = `in_sdk_${Date.now()}`;
  let clickId = '';
  let saleId: number | null = null;

  it('click → cookie (handleReferral)', async () => {
    const result = await handleReferral(new Request('https://acme.test/?aff=pat20'), { client });
    expect(result.action, JSON.stringify(result)).toBe('tracked');
    if (result.action !== 'tracked') return;
    expect(result.clickId).toMatch(/^clk_/);
    expect(result.partnerCode).toBe('pat');
    expect(result.cookieWindowDays).toBe(60);
    expect(result.setCookie).toBe(`reftrack_click_id=${result.clickId}; Max-Age=${60 * 86_400}; Path=/; SameSite=Lax; Secure`);
    clickId = result.clickId;
  });

  it('a second click with the cookie keeps the first click id', async () => {
    const request = new Request('https://acme.test/?aff=pat20', { headers: { cookie: `reftrack_click_id=${clickId}` } });
    const result = await handleReferral(request, { client });
    expect(result).toMatchObject({ action: 'tracked', clickId, setCookie: null });
  });

  it('trackLead (server mode)', async () => {
    const result = await client.trackLead({ clickId, customerExternalId: 'user_1', email: 'ada@customer.test' });
    expect(result.alreadyLead).toBe(false);
    if (result.alreadyLead) return;
    expect(result.provisional).toBe(false);
    expect(result.data).toMatchObject({ click_id: clickId, customer_status: 'lead' });
    expect(typeof result.data.lead_id).toBe('number');
    expect(result.requestId).toBeTruthy();
  });

  it('trackLead again: the "already a lead" 400 is thrown, or reported when asked', async () => {
    const error = await client.trackLead({ clickId, customerExternalId: 'user_1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    const result = await client.trackLead({ clickId, customerExternalId: 'user_1' }, { ignoreAlreadyLead: true });
    expect(result).toMatchObject({ alreadyLead: true, status: 'lead' });
  });

  it('trackSale records an attributed sale with its commission', async () => {
    const result = await client.trackSale({ customerExternalId: 'user_1', clickId, amount: 5000, invoiceId, occurredAt: new Date() });
    expect(result.duplicate).toBe(false);
    if (result.duplicate) return;
    expect(result.data).toMatchObject({ attributed: true, transaction_id: invoiceId, commission_amount_cents: 1000, currency: 'USD' });
    saleId = 'sale_id' in result.data ? result.data.sale_id : null;
    expect(typeof saleId).toBe('number');
  });

  it('trackSale with the same invoiceId is a duplicate success with the recorded sale id', async () => {
    const result = await client.trackSale({ customerExternalId: 'user_1', amount: 5000, invoiceId });
    expect(result).toMatchObject({ duplicate: true, saleId, transactionId: invoiceId });
  });

  it('an unsupported currency is an InvalidRequestError with its code', async () => {
    const error = await client.trackSale({ customerExternalId: 'user_1', amount: 100, invoiceId: `${invoiceId}_gbp`, currency: 'gbp' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).toMatchObject({ status: 422, code: ERROR_CODES.unsupportedCurrency, docsUrl: `${baseUrl}/docs/errors#unsupported_currency` });
  });

  let refundId: number | undefined;
  it('trackRefund', async () => {
    const result = await client.trackRefund({ invoiceId, reason: 'refund', refundReason: 'customer asked' });
    expect(result.data).toMatchObject({ transaction_id: invoiceId, reason: 'refund' });
    expect(result.requestId).toBeTruthy();
    refundId = result.data.refund_id;
  });

  it('trackRefund sent again (as a retry after a lost answer would) answers the same refund', async () => {
    const result = await client.trackRefund({ invoiceId, reason: 'refund' });
    expect(result.data.refund_id).toBe(refundId);
  });

  it('trackRefund of an unknown sale is a NotFoundError with a request id', async () => {
    const error = await client.trackRefund({ invoiceId: 'in_never_sold' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ code: ERROR_CODES.notFound });
    expect((error as NotFoundError).requestId).toBeTruthy();
  });

  it('readiness', async () => {
    const result = await client.readiness();
    expect(result.data).toMatchObject({ program_id: 1, key_status: 'active' });
    expect(Array.isArray(result.data.checklist)).toBe(true);
  });

  it('sendTestSale', async () => {
    const result = await client.sendTestSale();
    expect(result.data).toMatchObject({ test_mode: true });
    expect(typeof result.data.sale_id).toBe('number');
  });

  it('a wrong key is an AuthenticationError, not retried', async () => {
    const wrong = new Reftrack({ apiKey: 'aff_not_a_real_key_000000000000000', baseUrl, onWarning: () => {} });
    const error = await wrong.sendTestSale().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ status: 401, attempts: 1 });
    const readinessError = await wrong.readiness().catch((e: unknown) => e);
    expect(readinessError).toMatchObject({ status: 401, code: ERROR_CODES.invalidKey });
  });

  it('no rotation warnings so far', () => {
    expect(warnings).toEqual([]);
  });

  it('a key marked for rotation surfaces the deadline through onWarning', async () => {
    const deadline = new Date(Date.now() + 7 * 86_400_000);
    deadline.setUTCMilliseconds(0);
    await runCommand('keys', 'mark-rotation', '--program', '1', '--deadline', deadline.toISOString());
    // An operator's mark reaches a running server within a second (it caches keys for half of one).
    const markedBy = Date.now() + 1_000;
    let result = await client.sendTestSale();
    while (result.warnings.length === 0 && Date.now() < markedBy) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      result = await client.sendTestSale();
    }
    expect(result.warnings.length).toBeGreaterThan(0);
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatchObject({ code: ERROR_CODES.apiKeyRotationRequired });
    expect(new Date(warnings[0].rotateBy ?? 0).getTime()).toBe(deadline.getTime());
    expect(warnings[0].deprecation).toMatch(/^@\d+$/);
    expect(warnings[0].sunset).toBeTruthy();
  });
});
