import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BRAND, ERRORS, ROUTES } from '@reftrack/contract';
import { GoneError, Reftrack, buildClickCookie, handleReferral, readCookie, referralMiddleware, type HandleReferralResult } from '../src/index.js';
import { startScriptedServer, typedError, type Reply, type ScriptedServer } from './helpers/scripted-server.js';

const CLICK_OK: Reply = { status: 200, body: { success: true, click_id: 'clk_new', partner_code: 'pat', cookie_window_days: 60 } };
const SIXTY_DAYS = 60 * 86_400;

let api: ScriptedServer;
let client: Reftrack;
let site: http.Server | undefined;
beforeEach(async () => {
  api = await startScriptedServer([CLICK_OK]);
  client = new Reftrack({ baseUrl: api.url, onWarning: () => {} });
});
afterEach(async () => {
  await api.close();
  if (site) {
    site.closeAllConnections();
    await new Promise((resolve) => site?.close(resolve));
    site = undefined;
  }
});

async function useApi(replies: Reply[]) {
  await api.close();
  api = await startScriptedServer(replies);
  client = new Reftrack({ baseUrl: api.url, onWarning: () => {} });
}

/** The advertiser's own site: a real node:http server running `handler` for each request. */
async function startSite(handler: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>): Promise<string> {
  site = http.createServer((req, res) => {
    handler(req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => site?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
}

describe('handleReferral with a WHATWG Request', () => {
  it('sends the full URL, user agent and referrer, and builds the cookie', async () => {
    const request = new Request('https://acme.test/pricing?aff=pat20&utm=x', {
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)', referer: 'https://blog.test/post' },
    });
    const result = await handleReferral(request, { client, cookieDomain: '.acme.test' });
    expect(api.received[0].url).toBe(ROUTES.trackClick.path);
    expect(api.received[0].headers.authorization).toBeUndefined();
    expect(api.received[0].body).toEqual({
      affiliate_url: 'https://acme.test/pricing?aff=pat20&utm=x',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)',
      referrer_url: 'https://blog.test/post',
    });
    expect(result).toEqual({
      action: 'tracked',
      clickId: 'clk_new',
      partnerCode: 'pat',
      cookieWindowDays: 60,
      setCookie: `reftrack_click_id=clk_new; Max-Age=${SIXTY_DAYS}; Path=/; SameSite=Lax; Domain=.acme.test; Secure`,
      requestId: 'req_1',
    });
  });

  it('does nothing without an aff parameter', async () => {
    const result = await handleReferral(new Request('https://acme.test/pricing?ref=pat20'), { client });
    expect(result).toEqual({ action: 'none', reason: 'no_aff_parameter', clickId: null, setCookie: null });
    expect(api.received).toHaveLength(0);
  });

  it('keeps an existing cookie: sends its id and sets nothing when the server keeps it (first click wins)', async () => {
    await useApi([{ status: 200, body: { success: true, click_id: 'clk_first', partner_code: 'pat', cookie_window_days: 60 } }]);
    const request = new Request('https://acme.test/?aff=other', { headers: { cookie: `theme=dark; ${BRAND.cookieName}=clk_first; x=1` } });
    const result = await handleReferral(request, { client });
    expect(api.received[0].body).toMatchObject({ existing_click_id: 'clk_first' });
    expect(result).toMatchObject({ action: 'tracked', clickId: 'clk_first', setCookie: null });
  });

  it('replaces a cookie whose id the server no longer knows', async () => {
    const request = new Request('http://acme.test/?aff=pat20', { headers: { cookie: `${BRAND.cookieName}=clk_gone` } });
    const result = await handleReferral(request, { client });
    expect(result).toMatchObject({ clickId: 'clk_new', setCookie: `reftrack_click_id=clk_new; Max-Age=${SIXTY_DAYS}; Path=/; SameSite=Lax` });
  });

  it.each([
    ['410 link_disabled', { status: 410, body: { success: false, message: ERRORS.clickLinkDisabled.message, ...typedError(ERRORS.clickLinkDisabled, {}, { hint: ERRORS.clickLinkDisabled.hint }) } }],
    ['429', { status: 429, body: typedError(ERRORS.rateLimited, { seconds: 1 }, { status: 429, retry_after_seconds: 1 }), headers: { 'retry-after': '1' } }],
  ] as Array<[string, Reply]>)('leaves the cookie alone and does not throw on %s', async (_label, reply) => {
    await useApi([reply, CLICK_OK]);
    const request = new Request('https://acme.test/?aff=pat20', { headers: { cookie: `${BRAND.cookieName}=clk_first` } });
    const result = await handleReferral(request, { client });
    expect(result).toMatchObject({ action: 'failed', clickId: 'clk_first', setCookie: null });
    expect(result.action === 'failed' && result.error.status).toBe(reply.status);
    expect(api.received).toHaveLength(1);
  });

  it('does not throw when the service is down', async () => {
    const deadUrl = api.url;
    await api.close();
    api = await startScriptedServer([CLICK_OK]);
    const result = await handleReferral(new Request('https://acme.test/?aff=pat20'), { baseUrl: deadUrl });
    expect(result).toMatchObject({ action: 'failed', setCookie: null });
  });

  it('throws when asked to', async () => {
    await useApi([{ status: 410, body: typedError(ERRORS.clickLinkDisabled) }]);
    await expect(handleReferral(new Request('https://acme.test/?aff=off'), { client, throwOnError: true })).rejects.toBeInstanceOf(GoneError);
  });

  it('validates its options', async () => {
    await expect(handleReferral(new Request('https://acme.test/'), { cookieDomain: 'acme.test; HttpOnly' })).rejects.toThrow(/cookieDomain/);
    await expect(handleReferral(new Request('https://acme.test/'), { client, baseUrl: api.url })).rejects.toThrow(/either client or baseUrl/);
    await expect(handleReferral(new Request('https://acme.test/'), { domain: '.acme.test' } as never)).rejects.toThrow(/unknown option "domain"/);
  });
});

describe('handleReferral with a Node IncomingMessage', () => {
  it('rebuilds the full URL from the Host header and sets the cookie on the response', async () => {
    const url = await startSite(async (req, res) => {
      const result = await handleReferral(req, { client });
      if (result.setCookie) res.setHeader('Set-Cookie', result.setCookie);
      res.end(JSON.stringify(result));
    });
    const response = await fetch(`${url}/landing?aff=pat20`, { headers: { 'user-agent': 'TestAgent/1.0', referer: 'https://news.test/' } });
    expect(response.headers.get('set-cookie')).toBe(`reftrack_click_id=clk_new; Max-Age=${SIXTY_DAYS}; Path=/; SameSite=Lax`);
    expect(api.received[0].body).toEqual({ affiliate_url: `${url}/landing?aff=pat20`, user_agent: 'TestAgent/1.0', referrer_url: 'https://news.test/' });
  });

  it('trusts X-Forwarded-Proto and X-Forwarded-Host only when told to', async () => {
    let trust = false;
    const url = await startSite(async (req, res) => {
      const result = await handleReferral(req, { client, trustProxy: trust });
      res.end(result.setCookie ?? '');
    });
    const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'www.acme.test' };
    expect(await (await fetch(`${url}/?aff=pat20`, { headers })).text()).not.toContain('Secure');
    trust = true;
    expect(await (await fetch(`${url}/?aff=pat20`, { headers })).text()).toContain('; Secure');
    expect((api.received[1].body as { affiliate_url: string }).affiliate_url).toBe('https://www.acme.test/?aff=pat20');
  });
});

describe('referralMiddleware', () => {
  it('works as Express-style (req, res, next): appends the cookie and leaves the result in res.locals', async () => {
    const middleware = referralMiddleware({ client });
    const url = await startSite(async (req, res) => {
      res.setHeader('Set-Cookie', 'session=abc; Path=/');
      const locals: Record<string, unknown> = {};
      Object.assign(res, { locals });
      await new Promise<void>((next) => void middleware(req, res, () => next()));
      res.end(JSON.stringify((locals.reftrack as HandleReferralResult).action));
    });
    const response = await fetch(`${url}/?aff=pat20`);
    expect(await response.json()).toBe('tracked');
    expect(response.headers.getSetCookie()).toEqual(['session=abc; Path=/', `reftrack_click_id=clk_new; Max-Age=${SIXTY_DAYS}; Path=/; SameSite=Lax`]);
  });

  it('works as plain node:http (awaited without next)', async () => {
    const middleware = referralMiddleware({ client, cookieDomain: '.acme.test' });
    const url = await startSite(async (req, res) => {
      const result = await middleware(req, res);
      res.end(result?.action ?? 'skipped');
    });
    const response = await fetch(`${url}/?aff=pat20`);
    expect(await response.text()).toBe('tracked');
    expect(response.headers.get('set-cookie')).toContain('Domain=.acme.test');
  });

  it('works as Koa-style (ctx, next) and uses ctx.originalUrl', async () => {
    const middleware = referralMiddleware({ client });
    const url = await startSite(async (req, res) => {
      const ctx = { req, res, originalUrl: req.url, state: {} as Record<string, unknown> };
      req.url = '/mounted-path-rewritten';
      let downstream = false;
      await middleware(ctx, async () => {
        downstream = true;
      });
      res.end(JSON.stringify({ downstream, action: (ctx.state.reftrack as HandleReferralResult).action }));
    });
    const response = await fetch(`${url}/shop?aff=pat20`);
    expect(await response.json()).toEqual({ downstream: true, action: 'tracked' });
    expect((api.received[0].body as { affiliate_url: string }).affiliate_url).toBe(`${url}/shop?aff=pat20`);
    expect(response.headers.get('set-cookie')).toContain('reftrack_click_id=clk_new');
  });

  it('ignores requests that are not GET', async () => {
    const middleware = referralMiddleware({ client });
    const url = await startSite(async (req, res) => {
      const result = await middleware(req, res);
      res.end(String(result));
    });
    expect(await (await fetch(`${url}/?aff=pat20`, { method: 'POST' })).text()).toBe('null');
    expect(api.received).toHaveLength(0);
  });

  it('calls next even when the click call fails', async () => {
    await useApi([{ status: 500, body: { data: null, error: { status: 500, name: 'InternalServerError', message: ERRORS.clickFailed.message, details: {} } } }]);
    const middleware = referralMiddleware({ client });
    const url = await startSite(async (req, res) => {
      await new Promise<void>((next) => void middleware(req, res, () => next()));
      res.end('page');
    });
    const response = await fetch(`${url}/?aff=pat20`);
    expect(await response.text()).toBe('page');
    expect(response.headers.get('set-cookie')).toBeNull();
  });
});

describe('cookie helpers', () => {
  it('reads one cookie, decoding it, and ignores look-alikes', () => {
    expect(readCookie(`x_${BRAND.cookieName}=no; ${BRAND.cookieName}=clk%5F1`, BRAND.cookieName)).toBe('clk_1');
    expect(readCookie(`${BRAND.cookieName}=`, BRAND.cookieName)).toBeNull();
    expect(readCookie(undefined, BRAND.cookieName)).toBeNull();
  });

  it('rounds a fractional cookie window to whole seconds', () => {
    expect(buildClickCookie('clk_1', 0.5, { secure: false })).toBe('reftrack_click_id=clk_1; Max-Age=43200; Path=/; SameSite=Lax');
  });
});
