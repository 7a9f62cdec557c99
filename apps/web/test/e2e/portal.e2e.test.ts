/**
 * The partner portal in real Chromium against the real server (docs/partners.md): an owner invites
 * a partner from the partners page; the invitation arrives at a real SMTP server run here; the
 * partner accepts it, sees the portal, signs out, and signs in again with a one-time link read from
 * the mail. Then: a link request asked in the portal and approved on the partners page; a link's QR
 * code and daily chart; bank details for Wise and a payout's line of the Wise file; a program opened
 * for applications, a visitor applying on the public page by keyboard, the owner approving, and the
 * invitation mail signing the new partner in. The pages pass axe-core, work at phone width and from
 * the keyboard.
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

  it("the partner's stats: a range preset from the keyboard, their totals (revenue per currency), the daily chart and the breakdown by link", async () => {
    const section = partner.getByRole('region', { name: 'Your stats' });
    await section.getByRole('term').filter({ hasText: 'Clicks' }).first().waitFor();
    await section.getByRole('img', { name: /^Your clicks, leads and sales per day/ }).waitFor();
    const totals = async () => section.locator('.stat-totals').innerText();
    expect(await totals()).toMatch(/Clicks\s+1\b[\s\S]*Leads\s+1\b[\s\S]*Sales\s+1\b[\s\S]*Revenue\s+\S*50\.00/);
    const byLink = section.getByRole('region', { name: 'Breakdown by link' });
    await byLink.getByRole('rowheader', { name: /pat20/ }).waitFor();
    // The presets are buttons reached with Tab; Enter on "Last 7 days" shows 7 days.
    const seven = section.getByRole('button', { name: 'Last 7 days' });
    await seven.focus();
    await partner.keyboard.press('Enter');
    await section.locator('[aria-pressed="true"]', { hasText: 'Last 7 days' }).waitFor();
    await section.getByRole('img', { name: /^Your clicks, leads and sales per day/ }).waitFor();
    await section.getByRole('table').first().waitFor();
    expect(await totals()).toMatch(/Clicks\s+1\b/);
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

  it('a partner asks for a link in the portal; the owner approves it in the dashboard; the new link appears', async () => {
    await owner.goto(`${server.origin}/programs/1/partners`);
    await owner.getByLabel(/Partners may request more referral links/).check();
    await owner.getByText(/link requests allowed/).waitFor();
    await partner.goto(`${server.origin}/portal/partners/1`);
    await partner.getByRole('heading', { name: 'Request another link' }).waitFor();
    await partner.getByLabel('Short link you would like (optional)').fill('pat-newsletter');
    await partner.getByLabel('Where you will use it (optional)').fill('My monthly newsletter');
    await partner.getByRole('button', { name: 'Request the link' }).click();
    await partner.getByText(/Link requested/).waitFor();
    await partner.getByRole('region', { name: 'Your link requests' }).getByText('Waiting for the owner').waitFor();
    await owner.reload();
    const requests = owner.getByRole('region', { name: 'Link requests waiting for a decision' });
    await requests.getByText('My monthly newsletter').waitFor();
    // The owner creates it under another short link than the one asked for.
    await owner.getByLabel('Short link to create for the link request of Pat Partner (empty: the one asked for)').fill('pat-letter');
    await owner.getByRole('button', { name: 'Approve the link request of Pat Partner' }).click();
    await owner.getByText('Link pat-letter created for Pat Partner.').waitFor();
    await partner.reload();
    await partner.getByRole('region', { name: 'Referral links table' }).getByText('https://acme.test/?aff=pat-letter').waitFor();
    await partner.getByRole('region', { name: 'Your link requests' }).getByText('Approved').waitFor();
  });

  it("a link's QR code and its daily chart of clicks, leads and sales open from the keyboard", async () => {
    const summary = partner.locator('summary', { hasText: 'QR code and daily chart of pat20' });
    await summary.focus();
    await partner.keyboard.press('Enter');
    const qr = partner.getByRole('img', { name: 'QR code of the link https://acme.test/?aff=pat20' });
    await qr.waitFor();
    // A version-2 or larger symbol (25+ modules) with its quiet zone: the link does not fit version 1.
    expect(Number((await qr.getAttribute('viewBox'))!.split(' ')[2])).toBeGreaterThanOrEqual(33);
    await partner.getByRole('img', { name: /^pat20: last 30 days \(UTC\): 1 click, 1 lead, 1 sale\.$/ }).waitFor();
    await partner.getByRole('link', { name: 'Download the QR code (SVG)' }).first().waitFor();
    await partner.screenshot({ path: join(shotsDir, 'portal-link-details.png'), fullPage: true });
  });

  it('the partner switches to bank details paid through Wise, and each payout shows its line of the Wise file', async () => {
    await partner.getByLabel('Bank transfer (paid through Wise)').check();
    await partner.getByLabel('Account holder').fill('Pat Partner');
    await partner.getByLabel('E-mail address for payment notices').fill('pat-bank@partner.test');
    await partner.getByLabel('IBAN', { exact: true }).fill('DE89 3704 0044 0532 0130 00');
    await partner.getByRole('button', { name: 'Save payout details' }).click();
    await partner.getByText('Paid by bank transfer (Wise): Pat Partner, account ending 3000').waitFor();
    // The owner pays the approved commission by Wise (the dashboard's API, with the owner's session).
    const cookie = (await owner.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const headers = { cookie, origin: server.origin };
    const ledger = await call(server.origin, 'GET', '/api/dashboard/programs/1/commissions', undefined, headers);
    const ids = ledger.body.data.map((c: { id: number }) => c.id);
    expect((await call(server.origin, 'POST', '/api/dashboard/programs/1/commissions/approve', { ids }, headers)).status).toBe(200);
    const payout = await call(server.origin, 'POST', '/api/dashboard/programs/1/payouts', { partner_id: 1, currency: 'USD', method: 'wise', reference: 'PO-E2E-1' }, headers);
    expect(payout.status, payout.text).toBe(201);
    await partner.reload();
    await partner.getByRole('region', { name: 'Payouts table' }).getByText('Pat Partner,pat-bank@partner.test,PO-E2E-1,PRIVATE,target,', { exact: false }).waitFor();
  });

  it('applications: the owner opens the program; a visitor applies from the public page by keyboard; the owner approves; the invitation mail signs the new partner in', async () => {
    await owner.goto(`${server.origin}/programs/1/partners`);
    await owner.getByLabel(/Open for applications/).check();
    const applyUrl = (await owner.locator('code.link-url').filter({ hasText: '/apply/' }).textContent())!;
    expect(applyUrl).toMatch(new RegExp(`^${server.origin}/apply/[A-Za-z0-9_-]{16}$`));
    const visitor = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
    visitor.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    await visitor.goto(applyUrl);
    await visitor.getByRole('heading', { level: 1, name: 'Become a partner of Acme Store' }).waitFor();
    await visitor.getByText('60 days after a click').waitFor();
    expect(await checkAxe(visitor)).toEqual([]);
    expect(await visitor.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await visitor.setViewportSize({ width: 1280, height: 900 });
    await visitor.screenshot({ path: join(shotsDir, 'apply.png'), fullPage: true });
    // Keyboard only: each field in turn, then Enter on the button.
    await visitor.getByLabel('Your name').focus();
    await visitor.keyboard.type('Alex Applicant');
    await visitor.keyboard.press('Tab');
    await visitor.keyboard.type('alex@applicant.test');
    await visitor.keyboard.press('Tab');
    await visitor.keyboard.type('https://alex.example');
    await visitor.keyboard.press('Tab');
    await visitor.keyboard.type('A newsletter of 5,000 readers about tools for small shops.');
    await visitor.keyboard.press('Tab');
    expect(await visitor.evaluate(() => document.activeElement?.textContent)).toBe('Send the application');
    await visitor.keyboard.press('Enter');
    await visitor.getByRole('heading', { level: 1, name: 'Application received' }).waitFor();
    await visitor.getByRole('status').getByText(/if it is approved, an invitation/).waitFor();
    expect(await checkAxe(visitor)).toEqual([]);

    await owner.reload();
    const waiting = owner.getByRole('region', { name: 'Applications waiting for a decision' });
    await waiting.getByText('A newsletter of 5,000 readers about tools for small shops.').waitFor();
    expect(await checkAxe(owner)).toEqual([]);
    await owner.screenshot({ path: join(shotsDir, 'partners-applications.png'), fullPage: true });
    const before = mails.length;
    await owner.getByRole('button', { name: 'Approve Alex Applicant' }).click();
    await owner.getByText('Alex Applicant approved: partner created with the link alex-applicant, and an invitation sent to alex@applicant.test.').waitFor();
    const invitation = await linkFromMail('alex@applicant.test', '/portal/invitation', before);
    await visitor.goto(invitation);
    await visitor.getByRole('button', { name: 'Accept and sign in' }).click();
    await visitor.getByRole('heading', { level: 1, name: /Alex Applicant/ }).waitFor();
    await visitor.getByRole('region', { name: 'Referral links table' }).getByText('https://acme.test/?aff=alex-applicant').waitFor();
    await visitor.context().close();
  });

  it('passes axe-core (WCAG 2.1 AA) and works at phone width', async () => {
    await partner.goto(`${server.origin}/portal/partners/1`);
    await partner.getByRole('heading', { name: 'Program terms' }).waitFor();
    await partner.locator('summary', { hasText: 'QR code and daily chart of pat20' }).click();
    await partner.getByRole('img', { name: /^pat20: last 30 days/ }).waitFor();
    await partner.getByRole('region', { name: 'Your stats' }).getByRole('region', { name: 'Breakdown by link' }).waitFor();
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
