/**
 * The partner portal in real Chromium against the real server (docs/partners.md): an owner invites
 * a partner from the partners page; the invitation arrives at a real SMTP server run here; the
 * partner accepts it, sees the portal, signs out, and signs in again with a one-time link read from
 * the mail. The pages pass axe-core, work at phone width and from the keyboard.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { startReftrackServer, type ReftrackServer } from '../../../../scripts/e2e/reftrack-server.js';
import { call, launchChromium, repoRoot } from './harness.js';

// Screenshots go to a temporary directory, or to docs/screenshots with UPDATE_SCREENSHOTS=1 (as the dashboard's).
const shotsDir = process.env.UPDATE_SCREENSHOTS ? join(repoRoot, 'docs/screenshots') : mkdtempSync(join(tmpdir(), 'reftrack-portal-shots-'));

const fixture = fileURLToPath(new URL('./fixture.json', import.meta.url));
const KEY = 'aff_0123456789abcdefghijABCDEFGHIJ01';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Mail {
  to: string[];
  raw: string;
}

let server: ReftrackServer;
let smtp: SMTPServer;
let browser: Browser;
let owner: Page;
let partner: Page;
const mails: Mail[] = [];
const problems: string[] = [];

async function until<T>(find: () => T | undefined, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The link to `path` in the newest mail to `to` after `after` mails (quoted-printable undone). */
async function linkFromMail(to: string, path: string, after: number): Promise<string> {
  return until(() => {
    for (const m of mails.slice(after).reverse()) {
      if (!m.to.includes(to)) continue;
      const body = m.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const found = new RegExp(`https?://[^\\s"<>]*${path.replace(/\//g, '\\/')}\\?token=[A-Za-z0-9_-]+`).exec(body);
      if (found) return found[0];
    }
    return undefined;
  }, `a mail to ${to} with ${path}`);
}

async function checkAxe(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const port = (smtp.server.address() as AddressInfo).port;
  server = await startReftrackServer({
    fixture,
    tmpPrefix: 'reftrack-web-portal-',
    env: { LOG_LEVEL: 'warn', OIDC_ISSUER: undefined, OIDC_AUDIENCE: undefined, REDIS_URL: undefined, SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Acme partners <partners@acme.test>' },
  });
  // A sale on Pat's link, so the portal has numbers to show.
  const click = await call(server.origin, 'POST', '/api/v1/track/click', { affiliate_url: 'https://acme.test/?aff=pat20' });
  expect(click.status, click.text).toBe(200);
  expect((await call(server.origin, 'POST', '/api/v1/track/lead', { click_id: click.body.click_id, customer_key: 'portal-customer' }, { authorization: `Bearer ${KEY}` })).status).toBe(200);
  expect((await call(server.origin, 'POST', '/api/v1/track/sale', { transaction_id: 'in_portal_1', amount_cents: 5000, customer_key: 'portal-customer' }, { authorization: `Bearer ${KEY}` })).status).toBe(200);
  browser = await launchChromium();
  owner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  partner = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  for (const p of [owner, partner]) {
    p.setDefaultTimeout(10_000);
    p.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  }
  await owner.goto(`${server.origin}/programs/1/partners`);
  await owner.waitForURL(/\/sign-in\?return_to=/);
  await owner.getByLabel('E-mail').fill('owner@acme.test');
  await owner.getByRole('button', { name: 'Sign in', exact: true }).click();
  await owner.getByRole('heading', { name: 'Partners', level: 2 }).waitFor();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await new Promise((r) => smtp?.close(() => r(undefined)));
});

describe('partner portal', () => {
  it('an owner invites a partner; the partner accepts from the e-mail and sees their portal', async () => {
    const before = mails.length;
    await owner.getByRole('button', { name: /Invite Pat Partner/ }).click();
    await owner.getByText('Invitation to the partner portal sent to pat@partner.test.').waitFor();
    const link = await linkFromMail('pat@partner.test', '/portal/invitation', before);
    expect(link.startsWith(server.origin)).toBe(true);
    await partner.goto(link);
    await partner.getByRole('button', { name: 'Accept and sign in' }).click();
    await partner.getByRole('heading', { level: 1, name: /Pat Partner/ }).waitFor();
    expect(partner.url()).not.toContain('token=');
    await partner.getByRole('heading', { name: 'Program terms' }).waitFor();
    const links = partner.getByRole('region', { name: 'Referral links table' });
    await links.getByText('https://acme.test/?aff=pat20').waitFor();
    await partner.getByRole('button', { name: 'Copy link pat20' }).waitFor();
    await partner.getByRole('region', { name: 'Commissions by status and currency' }).getByText('Pending (in hold)').waitFor();
    await partner.screenshot({ path: join(shotsDir, 'portal.png'), fullPage: true });
    const text = (await partner.locator('main').textContent()) ?? '';
    expect(text).not.toContain('portal-customer');
  });

  it('the partner saves payout details', async () => {
    await partner.getByLabel('PayPal e-mail address').fill('pat-pay@partner.test');
    await partner.getByRole('button', { name: 'Save payout details' }).click();
    await partner.getByText('Payout details saved.').waitFor();
  });

  it('after signing out, a one-time link from the e-mail signs the partner in again, once', async () => {
    await partner.getByRole('button', { name: 'Sign out' }).click();
    await partner.getByRole('heading', { level: 1, name: 'Sign in to your partner portal' }).waitFor();
    const before = mails.length;
    // Keyboard only: type the address and press Enter.
    await partner.getByLabel('E-mail address').focus();
    await partner.keyboard.type('pat@partner.test');
    await partner.keyboard.press('Enter');
    await partner.getByText(/If this address belongs to a partner/).waitFor();
    const link = await linkFromMail('pat@partner.test', '/portal/verify', before);
    await partner.goto(link);
    await partner.getByRole('button', { name: 'Sign in', exact: true }).focus();
    await partner.keyboard.press('Enter');
    await partner.getByRole('heading', { level: 1, name: /Pat Partner/ }).waitFor();
    // The same link a second time is refused in words.
    await partner.goto(link);
    await partner.getByRole('button', { name: 'Sign in', exact: true }).click();
    await partner.getByText(/already used or it expired/).waitFor();
  });

  it('the advertiser session does not open the portal: the owner sees the portal sign-in', async () => {
    await owner.goto(`${server.origin}/portal/partners/1`);
    await owner.getByRole('heading', { level: 1, name: 'Sign in to your partner portal' }).waitFor();
  });

  it('passes axe-core (WCAG 2.1 AA) and works at phone width', async () => {
    await partner.goto(`${server.origin}/portal/partners/1`);
    await partner.getByRole('heading', { name: 'Program terms' }).waitFor();
    expect(await checkAxe(partner)).toEqual([]);
    await partner.setViewportSize({ width: 390, height: 844 });
    expect(await partner.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await partner.screenshot({ path: join(shotsDir, 'portal-phone.png'), fullPage: true });
    await partner.goto(`${server.origin}/portal/sign-in`);
    await owner.goto(`${server.origin}/portal/sign-in`);
    await owner.getByRole('heading', { level: 1, name: 'Sign in to your partner portal' }).waitFor();
    expect(await checkAxe(owner)).toEqual([]);
    await owner.screenshot({ path: join(shotsDir, 'portal-sign-in.png') });
    expect(problems).toEqual([]);
  });
});
