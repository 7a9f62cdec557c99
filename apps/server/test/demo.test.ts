/**
 * The demo shop of `start --demo` (design; docs/quickstart.md): served only in demo mode, a page
 * that passes the page-header rules and embeds the tracker, and a "backend" that reports the lead
 * and the sale with the demo key through the tracking API. The browser walk-through of the same
 * flow runs in Chromium (packages/tracker/test/e2e/demo-shop.e2e.test.ts).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, trackerSnippet } from '@reftrack/contract';
import { dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { signInAs } from './helpers/accounts.js';
import { click } from './helpers/flows.js';

const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const inline = (html: string, tag: 'script' | 'style') => [...html.matchAll(new RegExp(`<${tag}(?![^>]*\\bsrc=)[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]);
const directive = (csp: string | null, name: string) => (csp ?? '').split(';').map((d) => d.trim().split(/\s+/)).find(([n]) => n === name)?.slice(1) ?? [];

describe(`[${dbKind}] the demo shop is not served outside demo mode`, () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  it('GET /demo/shop is the dashboard app, not the shop; its actions do not exist', async () => {
    const page = await s.get('/demo/shop?aff=pat20');
    expect(page.text).not.toContain('Demo shop');
    // 405: only the dashboard app's GET answers under that path.
    expect((await s.post('/demo/shop/signup', { click_id: 'clk_x' })).status).toBe(405);
    expect((await s.post('/demo/shop/buy', { customer_key: 'demo_0123456789ab' })).status).toBe(405);
  });

  it('a link of any program is shared on its own domain', async () => {
    const links = await s.get('/api/dashboard/programs/1/links', await signInAs(s, 'owner@acme.test'));
    expect(links.body.data.find((l: { short_link: string }) => l.short_link === 'pat20').url).toBe('https://acme.test/?aff=pat20');
  });
});

describe(`[${dbKind}] the demo shop in demo mode`, () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ demo: { programId: 1, apiKey: KEY1 } });
  });
  afterAll(() => s?.close());

  it('serves a page that embeds the tracker tag, under a policy that allows exactly its inline blocks', async () => {
    const res = await s.get('/demo/shop?aff=pat20');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain(trackerSnippet('', 1));
    const csp = res.headers.get('content-security-policy');
    expect(csp).not.toContain('unsafe-inline');
    expect(directive(csp, 'frame-ancestors')).toEqual(["'none'"]);
    expect(directive(csp, 'connect-src')).toEqual(["'self'"]);
    const scripts = inline(res.text, 'script');
    const styles = inline(res.text, 'style');
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    expect(directive(csp, 'script-src')).toEqual(["'self'", sha(scripts[0]!)]);
    expect(directive(csp, 'style-src')).toEqual([sha(styles[0]!)]);
    // The demo key stays on the server.
    expect(res.text).not.toContain(KEY1);
  });

  it('sign up reports a server-mode lead for the click, buy reports a sale attributed to its partner', async () => {
    const clickId = await click(s, 'pat20');
    const signup = await s.post('/demo/shop/signup', { click_id: clickId });
    expect(signup.status, signup.text).toBe(200);
    expect(signup.body.data).toMatchObject({ customer_key: expect.stringMatching(/^demo_[0-9a-f]{12}$/), lead: { click_id: clickId, customer_status: 'lead' } });
    const customerKey = signup.body.data.customer_key as string;

    const buy = await s.post('/demo/shop/buy', { customer_key: customerKey });
    expect(buy.status, buy.text).toBe(200);
    expect(buy.body.data.sale).toMatchObject({ attributed: true, transaction_id: expect.stringMatching(/^demo_order_/), commission_amount_cents: 980, currency: 'USD' });
    const sale = await s.db('sale_events').where({ id: buy.body.data.sale.sale_id }).first();
    const customer = await s.db('customers').where({ id: sale.customer_id }).first();
    expect(customer).toMatchObject({ click_id: clickId, customer_key: customerKey, program_id: 1 });
    expect(Number(customer.partner_id)).toBe(1);
    expect(Number(sale.amount_cents)).toBe(4900);
    expect(await s.db('commissions').where({ sale_id: sale.id })).toHaveLength(1);
  });

  it('passes the tracking API\'s refusals through, and refuses input it cannot use', async () => {
    const unknown = await s.post('/demo/shop/signup', { click_id: 'clk_doesnotexist' });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.body.error.message).toEqual(expect.any(String));
    for (const [path, body] of [['/demo/shop/signup', {}], ['/demo/shop/signup', { click_id: 'x'.repeat(300) }], ['/demo/shop/buy', { customer_key: 'user_42' }]] as const) {
      const res = await s.post(path, body);
      expect(res.status, path).toBe(400);
      expect(res.body.error.message).toBe(ERRORS.demoShopInput.message);
    }
  });

  it('refuses writes from another site and bodies that are not JSON (like the dashboard)', async () => {
    const clickId = await click(s, 'pat20');
    const cross = await s.post('/demo/shop/signup', { click_id: clickId }, { origin: 'http://evil.test' });
    expect(cross.status).toBe(403);
    expect(cross.body.error.message).toBe(ERRORS.crossSiteRefused.message);
    const form = await s.raw('/demo/shop/signup', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ click_id: clickId }) });
    expect(form.status).toBe(415);
    expect(await s.db('lead_events').whereIn('customer_id', s.db('customers').select('id').where({ click_id: clickId }))).toHaveLength(0);
  });

  it('the dashboard shares the demo program\'s links as the demo shop, and other programs\' on their domain', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const demoLinks = (await s.get('/api/dashboard/programs/1/links', cookie)).body.data;
    expect(demoLinks.find((l: { short_link: string }) => l.short_link === 'pat20').url).toBe(`${s.running.deps.config.publicBaseUrl}/demo/shop?aff=pat20`);
    const other = (await s.get('/api/dashboard/programs/2/links', cookie)).body.data;
    expect(other.find((l: { short_link: string }) => l.short_link === 'open1').url).toBe('https://open.test/?aff=open1');
  });
});
