/**
 * GET /docs/api in real Chromium: Swagger UI, served by this server (no CDN), renders every
 * operation of /openapi.json under the page's content security policy, without a console error, a
 * CSP violation or a request that leaves the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { API_OPERATIONS } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

let s: TestServer;
let browser: Browser;
beforeAll(async () => {
  s = await startTestServer();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe(`[${dbKind}] API reference page`, () => {
  it('is served with a content security policy of this server only, and no framing', async () => {
    const res = await s.get('/docs/api');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.text).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
  });

  it('serves only the renderer files it names', async () => {
    expect((await s.get('/docs/api/swagger-ui-bundle.js')).status).toBe(200);
    expect((await s.get('/docs/api/swagger-ui.css')).headers.get('content-type')).toContain('text/css');
    const other = await s.get('/docs/api/package.json');
    expect(other.status).toBe(404);
    expect(other.body.error.name).toBe('NotFoundError');
    expect((await s.get('/docs/api/..%2F..%2Fpackage.json')).status).toBe(404);
  });

  it('renders every operation, with its request body and query parameters, in Chromium without console errors or blocked or foreign requests', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const origin = new URL(s.url).origin;
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`answered ${r.status()}: ${r.url()}`);
    });
    page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) problems.push(`foreign request: ${r.url()}`);
    });
    await page.goto(`${s.url}/docs/api`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    // Tag sections start expanded: every operation of the document has its block.
    await expect.poll(() => page.locator('.opblock').count(), { timeout: 10_000 }).toBe(API_OPERATIONS.length);
    expect(await page.locator('.info .title').innerText()).toContain('Reftrack API');
    expect(await page.locator('.opblock-summary-path', { hasText: '/api/v1/track/sale' }).count()).toBe(1);
    // Opening an operation shows its responses, including the error envelopes.
    await page.locator('#operations-Tracking-postApiV1TrackSale .opblock-summary').click();
    await page.waitForSelector('#operations-Tracking-postApiV1TrackSale .responses-table');
    expect(await page.locator('#operations-Tracking-postApiV1TrackSale .response-col_status').allInnerTexts()).toEqual(expect.arrayContaining(['200', '401', '409']));
    // A write shows its request body; a list route its query parameters.
    await page.locator('#operations-Dashboard-postApiDashboardPrograms .opblock-summary').click();
    await page.waitForSelector('#operations-Dashboard-postApiDashboardPrograms .opblock-section-request-body');
    expect(await page.locator('#operations-Dashboard-postApiDashboardPrograms .opblock-section-request-body').innerText()).toContain('commission_type');
    await page.locator('#operations-Dashboard-getApiTrackingEventsProgramId .opblock-summary').click();
    await page.waitForSelector('#operations-Dashboard-getApiTrackingEventsProgramId .parameters');
    expect(await page.locator('#operations-Dashboard-getApiTrackingEventsProgramId .parameters').innerText()).toContain('pageSize');
    expect(problems).toEqual([]);
    await page.close();
  });
});
