/**
 * The Webhooks page in real Chromium against the real server (docs/webhooks.md): an owner adds an
 * endpoint, sees its secret once, a sale is delivered to a local receiver signed as Standard
 * Webhooks says, the delivery log shows it, "Send test event" reaches the receiver; the page passes
 * axe-core, works at phone width and with the keyboard.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';
import { call, launchChromium } from './harness.js';

const fixture = fileURLToPath(new URL('./fixture.json', import.meta.url));
const KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let server: ReftrackServer;
let browser: Browser;
let page: Page;
let receiver: http.Server;
let receiverUrl: string;
const received: Received[] = [];
const problems: string[] = [];

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/reftrack`;
  // The receiver is on loopback: the operator setting for self-hosted networks allows it.
  server = await startReftrackServer({
    fixture,
    tmpPrefix: 'reftrack-web-hooks-',
    env: { LOG_LEVEL: 'warn', OIDC_ISSUER: undefined, OIDC_AUDIENCE: undefined, REDIS_URL: undefined, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  await page.goto(`${server.origin}/webhooks`);
  await page.waitForURL(/\/sign-in\?return_to=/);
  await page.getByLabel('E-mail').fill('owner@acme.test');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((r) => receiver?.close(r));
});

async function until<T>(find: () => T | undefined, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Standard Webhooks: base64 HMAC-SHA256 of "id.timestamp.body" with the secret's bytes (after whsec_). */
function verified(r: Received, secret: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature'] ?? '').split(' ').includes(`v1,${expected}`);
}

describe('webhooks page (owner)', () => {
  let secret = '';

  it('adds an endpoint and shows its signing secret once', async () => {
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByRole('checkbox', { name: 'sale.created' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('heading', { name: 'Signing secret' }).waitFor();
    secret = (await page.locator('code.secret-value').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: 'Signing secret' }).waitFor({ state: 'detached' });
    await page.getByRole('region', { name: 'Webhook endpoints' }).getByText(receiverUrl).waitFor();
    expect(await page.locator('code.secret-value').count()).toBe(0);
  });

  it('delivers a sale to the receiver, signed, and lists the delivery in the endpoint\'s log', async () => {
    const click = await call(server.origin, 'POST', '/api/v1/track/click', { affiliate_url: 'https://acme.test/?aff=pat20' });
    expect(click.status, click.text).toBe(200);
    const lead = await call(server.origin, 'POST', '/api/v1/track/lead', { click_id: click.body.click_id, customer_key: 'hook-customer' }, { authorization: `Bearer ${KEY}` });
    expect(lead.status, lead.text).toBe(200);
    const sale = await call(server.origin, 'POST', '/api/v1/track/sale', { transaction_id: 'in_hook_1', amount_cents: 2500, customer_key: 'hook-customer' }, { authorization: `Bearer ${KEY}` });
    expect(sale.status, sale.text).toBe(200);
    const delivery = await until(() => received.find((r) => JSON.parse(r.body).type === 'sale.created'), 'the sale.created delivery');
    expect(verified(delivery, secret)).toBe(true);
    expect(JSON.parse(delivery.body).data.sale).toMatchObject({ transaction_id: 'in_hook_1', amount_cents: 2500 });

    await page.getByRole('button', { name: 'Delivery log' }).click();
    const log = page.getByRole('region', { name: 'Delivery log table' });
    await log.waitFor();
    await log.getByText('sale.created').waitFor();
    // The worker writes an attempt's outcome a moment after the receiver answered (in batches): until
    // then the log lists the delivery as pending. Refresh it, as a person would, until the 200 shows.
    const deadline = Date.now() + 20_000;
    while (!(await log.getByText('200').first().isVisible())) {
      if (Date.now() > deadline) throw new Error('the delivery log never showed the 200 answer');
      await page.waitForTimeout(250);
      await page.getByRole('button', { name: 'Refresh' }).click();
    }
  });

  it('sends a test event on request', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    const test = await until(() => received.find((r) => JSON.parse(r.body).type === 'webhook.test'), 'the test delivery');
    expect(verified(test, secret)).toBe(true);
  });

  it('passes axe-core (WCAG 2.1 AA), works at phone width and from the keyboard', async () => {
    await page.goto(`${server.origin}/webhooks`);
    await page.getByRole('region', { name: 'Webhook endpoints' }).waitFor();
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
      return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    });
    expect(violations).toEqual([]);
    // Keyboard: the URL field takes focus and Enter submits the form (an empty URL is refused in words).
    await page.getByLabel('URL').focus();
    await page.keyboard.press('Enter');
    await page.getByText('Not created:').waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
  });
});
