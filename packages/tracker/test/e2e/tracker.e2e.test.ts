/**
 * The built IIFE bundle in real Chromium against the real Reftrack server, on pages served from
 * www.shop.test, blog.shop.test and app.shop.test.
 */
import { existsSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LeadResult } from '../../src/index.js';
import { launchChromium, record, servedTrackerUrl, serverMain, startApiServer, startSite, type ApiServer, type Site } from './harness.js';

declare global {
  interface Window {
    Reftrack: typeof import('../../src/index.js');
  }
}

const CLICK = '/api/v1/track/click';
const LEAD = '/api/v1/track/lead';
const serverBuilt = existsSync(serverMain);
if (!serverBuilt) console.warn(`[tracker e2e] SKIPPED: ${serverMain} is missing; build it with \`pnpm --filter @reftrack/server build\`.`);

describe.skipIf(!serverBuilt)('tracker in Chromium against the Reftrack server', () => {
  let api: ApiServer;
  let site: Site;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    api = await startApiServer();
    site = await startSite(api, await servedTrackerUrl(api));
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await site?.stop();
    await api?.stop();
  });

  async function visitor() {
    const context = await browser.newContext();
    contexts.push(context);
    const seen = record(context, api);
    const page = await context.newPage();
    const clickCookies = async () => (await context.cookies()).filter((c) => c.name === 'reftrack_click_id');
    return { context, page, seen, clickCookies };
  }

  /** Loads a page and waits for the landing click (if any) to finish. */
  async function land(page: Page, url: string): Promise<string | null> {
    await page.goto(url);
    return page.evaluate(() => window.Reftrack.track());
  }

  it('stores the click on the root domain, readable from another subdomain, without Secure on http', async () => {
    const { page, seen, clickCookies } = await visitor();
    const landing = `${site.at('www')}/products?aff=pat20`;
    const id = await land(page, landing);
    expect(id).toMatch(/^clk_/);

    const [cookie, ...others] = await clickCookies();
    expect(others).toEqual([]);
    expect(cookie).toMatchObject({ value: id, domain: '.shop.test', path: '/', secure: false, sameSite: 'Lax' });
    // Lifetime is the program's cookie_window_days (60).
    expect(Math.abs(cookie.expires - (Date.now() / 1000 + 60 * 86400))).toBeLessThan(120);
    // Detection leaves no other cookie behind.
    expect((await page.context().cookies()).map((c) => c.name)).toEqual(['reftrack_click_id']);

    await seen.settled();
    const [click] = seen.posts(CLICK);
    expect(click.status).toBe(200);
    expect(click.response).toMatchObject({ success: true, click_id: id, partner_code: 'pat', cookie_window_days: 60 });
    expect(click.headers['content-type']).toBe('application/json');
    expect(click.body).toMatchObject({
      affiliate_url: landing,
      page_url: landing,
      page_title: 'Shop page',
      screen_resolution: expect.stringMatching(/^\d+x\d+$/),
      viewport_size: expect.stringMatching(/^\d+x\d+$/),
      language: expect.any(String),
      timezone: expect.any(String),
      session_id: expect.any(String),
      user_agent: await page.evaluate(() => navigator.userAgent),
    });
    expect(click.body).not.toHaveProperty('existing_click_id');

    await page.goto(`${site.at('blog')}/post`);
    expect(await page.evaluate(() => window.Reftrack.getClickId())).toBe(id);
    await page.goto(`${site.at('app')}/`);
    expect(await page.evaluate(() => window.Reftrack.getClickId())).toBe(id);
    // Pages without `aff` send nothing.
    expect(seen.posts(CLICK)).toHaveLength(1);
  });

  it('keeps the first click id when a second partner link is visited, and reports it as existing_click_id', async () => {
    const { page, seen, clickCookies } = await visitor();
    const first = await land(page, `${site.at('www')}/?aff=pat20`);
    const second = await land(page, `${site.at('blog')}/?aff=sam10`);
    expect(second).toBe(first);
    expect((await clickCookies()).map((c) => c.value)).toEqual([first]);

    await seen.settled();
    const clicks = seen.posts(CLICK);
    expect(clicks).toHaveLength(2);
    expect(clicks[1].body).toMatchObject({ existing_click_id: first, affiliate_url: `${site.at('blog')}/?aff=sam10` });
    expect(clicks[1].status).toBe(200);
    // The server logged the click for the new partner and kept the customer (3.1), hence the same id.
    expect(clicks[1].response).toMatchObject({ success: true, click_id: first });
  });

  it('sets nothing for a disabled link (410 link_disabled) and logs the error', async () => {
    const { page, seen, clickCookies } = await visitor();
    expect(await land(page, `${site.at('www')}/?aff=off`)).toBeNull();
    expect(await clickCookies()).toEqual([]);
    await seen.settled();
    const [click] = seen.posts(CLICK);
    expect(click.status).toBe(410);
    expect(click.response).toMatchObject({ success: false, error: { code: 'link_disabled' } });
    expect(seen.consoleLines.some((l) => l.startsWith('error [Reftrack] click 410'))).toBe(true);
  });

  it('sends nothing and sets nothing before consent, then tracks after Reftrack.consent()', async () => {
    const { page, seen, clickCookies } = await visitor();
    expect(await land(page, `${site.at('www')}/consent?aff=pat20`)).toBeNull();
    expect(await page.evaluate(() => window.Reftrack.trackLead({ customerKey: 'early' }))).toMatchObject({
      success: false,
      error: { code: 'consent_required' },
    });
    // Give a stray request time to show up.
    await page.waitForTimeout(300);
    expect(seen.calls).toEqual([]);
    expect(await page.context().cookies()).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    const id = await page.evaluate(() => {
      window.Reftrack.consent();
      return window.Reftrack.track();
    });
    expect(id).toMatch(/^clk_/);
    expect((await clickCookies()).map((c) => c.value)).toEqual([id]);
    expect(seen.posts(CLICK)).toHaveLength(1);
  });

  it('answers a browser lead under a server_required program with provisional: true', async () => {
    const { page, seen } = await visitor();
    const id = await land(page, `${site.at('www')}/?aff=pat20`);
    const result: LeadResult = await page.evaluate(() => window.Reftrack.trackLead({ customerKey: 'user-1', email: 'user1@shop.test' }));
    expect(result).toMatchObject({ success: true, provisional: true });

    await seen.settled();
    const [lead] = seen.posts(LEAD);
    expect(lead.body).toEqual({ click_id: id, customer_key: 'user-1', email: 'user1@shop.test' });
    expect(lead.headers).not.toHaveProperty('authorization');
  });

  it('settles a browser lead under a browser_allowed program', async () => {
    const { page } = await visitor();
    const id = await land(page, `${site.at('www')}/open?aff=open1`);
    const result = await page.evaluate(() => window.Reftrack.trackLead({ customerKey: 'user-2' }));
    expect(result).toMatchObject({ success: true, data: { click_id: id, customer_status: 'lead' } });
    expect(result).not.toHaveProperty('provisional');
  });

  it('makes no lead call for a visitor who came without a partner link', async () => {
    const { page, seen } = await visitor();
    expect(await land(page, `${site.at('www')}/`)).toBeNull();
    const result = await page.evaluate(() => window.Reftrack.trackLead({ customerKey: 'direct' }));
    expect(result).toMatchObject({ success: false, status: 0, error: { code: 'no_click_id' } });
    expect(seen.calls).toEqual([]);
  });
});
