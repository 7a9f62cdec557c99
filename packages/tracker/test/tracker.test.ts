import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clickOk, fakeFetch, sentBody, stubPage } from './browser-stubs.js';
import { FakeCookieJar } from './fake-browser.js';

type Tracker = typeof import('../src/tracker.js');

// The tracker keeps page state in its module, so each test loads a fresh copy.
async function load(): Promise<Tracker> {
  vi.resetModules();
  return import('../src/tracker.js');
}

let errors: ReturnType<typeof vi.spyOn>;
let infos: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  infos = vi.spyOn(console, 'info').mockImplementation(() => {});
  vi.spyOn(console, 'warn').mockImplementation(() => {});
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

const API = 'https://api.reftrack.test';

describe('click on landing', () => {
  it('sends nothing on a page without aff', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/', f);
    const t = await load();
    t.init({ apiBase: API });
    expect(await t.track()).toBeNull();
    expect(f).not.toHaveBeenCalled();
  });

  it('posts the click as JSON with keepalive and stores the id on the root domain', async () => {
    const f = fakeFetch(clickOk('clk_a', 30));
    const page = stubPage('http://www.shop.test/p?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API + '/' });
    expect(await t.track()).toBe('clk_a');

    expect(f).toHaveBeenCalledTimes(1);
    const [url, req] = f.mock.calls[0];
    expect(String(url)).toBe(API + '/api/v1/track/click');
    expect(req).toMatchObject({ method: 'POST', keepalive: true, headers: { 'Content-Type': 'application/json' } });
    expect(sentBody(f)).toMatchObject({ affiliate_url: 'http://www.shop.test/p?aff=pat20', session_id: page.session.reftrack_sid });
    expect(sentBody(f)).not.toHaveProperty('existing_click_id');

    expect([...page.cookies.stored.values()]).toEqual([
      { name: 'reftrack_click_id', value: 'clk_a', domain: '.shop.test', attrs: ['Max-Age=2592000', 'Path=/', 'SameSite=Lax', 'Domain=.shop.test'] },
    ]);
    expect(t.getClickId()).toBe('clk_a');
  });

  it('marks the cookie Secure on https only', async () => {
    const f = fakeFetch(clickOk());
    const page = stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API });
    await t.track();
    expect([...page.cookies.stored.values()][0].attrs).toContain('Secure');
  });

  it('calls the page origin when no apiBase is given (ESM build)', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/x?aff=pat20', f);
    const t = await load();
    t.init();
    await t.track();
    expect(String(f.mock.calls[0][0])).toBe('https://www.shop.test/api/v1/track/click');
  });

  it('uses the cookieDomain option instead of detection', async () => {
    const f = fakeFetch(clickOk());
    const page = stubPage('https://a.b.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API, cookieDomain: '.b.shop.test' });
    await t.track();
    expect([...page.cookies.stored.values()][0].domain).toBe('.b.shop.test');
    expect(page.cookies.writes).toHaveLength(1);
  });

  it('logs an error when the browser refuses the cookie', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API, cookieDomain: '.elsewhere.test' });
    expect(await t.track()).toBeNull();
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'cookie refused');
  });
});

describe('first-click attribution', () => {
  it('sends the existing id and keeps the cookie when the server answers another one', async () => {
    const f = fakeFetch(clickOk('clk_second'));
    const jar = new FakeCookieJar('www.shop.test');
    jar.cookie = 'reftrack_click_id=clk_first;Max-Age=999;Path=/;Domain=.shop.test';
    const page = stubPage('https://www.shop.test/?aff=sam10', f, jar);
    const t = await load();
    t.init({ apiBase: API });
    expect(await t.track()).toBe('clk_first');
    expect(sentBody(f).existing_click_id).toBe('clk_first');
    expect(page.cookies.writes).toHaveLength(1);
  });
});

describe('failed clicks', () => {
  const existing = () => {
    const jar = new FakeCookieJar('www.shop.test');
    jar.cookie = 'reftrack_click_id=clk_kept;Max-Age=999;Path=/';
    return jar;
  };

  it('logs a 410 link_disabled and leaves the cookie untouched', async () => {
    const error = { code: 'link_disabled', message: 'This referral link has been disabled.', hint: 'Ask the partner.' };
    const f = fakeFetch({ status: 410, body: { success: false, message: error.message, error } });
    const page = stubPage('https://www.shop.test/?aff=off', f, existing());
    const t = await load();
    t.init({ apiBase: API });
    expect(await t.track()).toBe('clk_kept');
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'click', 410, error);
    expect(page.cookies.writes).toHaveLength(1);
  });

  it('logs a 429 rate_limited and leaves the cookie untouched', async () => {
    const error = { status: 429, code: 'rate_limited', message: 'Too many requests', retry_after_seconds: 30 };
    const f = fakeFetch({ status: 429, body: { error } });
    const page = stubPage('https://www.shop.test/?aff=pat20', f, existing());
    const t = await load();
    t.init({ apiBase: API });
    expect(await t.track()).toBe('clk_kept');
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'click', 429, error);
    expect(page.cookies.writes).toHaveLength(1);
  });

  it('survives a network failure and a body that is not JSON', async () => {
    for (const answer of ['network', { status: 502 }] as const) {
      errors.mockClear();
      const f = fakeFetch(answer);
      stubPage('https://www.shop.test/?aff=pat20', f);
      const t = await load();
      expect(() => t.init({ apiBase: API })).not.toThrow();
      expect(await t.track()).toBeNull();
      expect(errors).toHaveBeenCalledWith('[Reftrack]', 'click', answer === 'network' ? 0 : 502, expect.any(Object));
    }
  });
});

describe('single-page apps', () => {
  it('sends one click per URL with aff, however often track() runs', async () => {
    const f = fakeFetch(clickOk());
    const page = stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API });
    await t.track();
    await t.track();
    page.navigate('/pricing');
    await t.track();
    page.navigate('/promo?aff=sam10');
    await t.track();
    expect(f).toHaveBeenCalledTimes(2);
    expect(sentBody(f, 1)).toMatchObject({ affiliate_url: 'https://www.shop.test/promo?aff=sam10', existing_click_id: 'clk_1' });
  });

  it('refuses a second init() and says so', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API });
    t.init({ apiBase: 'https://other.test' });
    await t.track();
    expect(f).toHaveBeenCalledTimes(1);
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'init twice');
  });
});

describe('consent', () => {
  it('writes nothing, stores nothing and calls nothing before consent()', async () => {
    const f = fakeFetch(clickOk());
    const page = stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API, requireConsent: true });
    expect(await t.track()).toBeNull();
    expect(await t.trackLead({ customerKey: 'u' })).toMatchObject({ success: false, status: 0, error: { code: 'consent_required' } });
    expect(f).not.toHaveBeenCalled();
    expect(page.cookies.writes).toEqual([]);
    expect(page.session).toEqual({});

    t.consent();
    expect(await t.track()).toBe('clk_1');
    expect(f).toHaveBeenCalledTimes(1);
  });

  it('accepts consent() before init()', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.consent();
    expect(f).not.toHaveBeenCalled();
    t.init({ apiBase: API, requireConsent: true });
    expect(await t.track()).toBe('clk_1');
  });
});

describe('trackLead', () => {
  const leadOk = { success: true, provisional: true, data: { click_id: 'clk_1', customer_status: 'click', lead_id: 4 } };

  it('posts click_id and customer_key without Authorization and resolves with the body', async () => {
    const f = fakeFetch(clickOk(), { status: 200, body: leadOk });
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API });
    // No await on the click: the lead must wait for it by itself.
    const result = await t.trackLead({ customerKey: 'user-9', email: 'u9@shop.test' });
    expect(result).toEqual(leadOk);
    const [url, req] = f.mock.calls[1];
    expect(String(url)).toBe(API + '/api/v1/track/lead');
    expect(req!.headers).toEqual({ 'Content-Type': 'application/json' });
    expect(sentBody(f, 1)).toEqual({ click_id: 'clk_1', customer_key: 'user-9', email: 'u9@shop.test' });
  });

  it('resolves with a failure, never rejects, on an error answer or a network failure', async () => {
    const error400 = { status: 400, name: 'BadRequestError', message: 'Customer not found. Provide a valid click_id or customer_key.', details: {} };
    const f = fakeFetch(clickOk(), { status: 400, body: { data: null, error: error400 } }, 'network');
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: API });
    expect(await t.trackLead({ customerKey: 'u' })).toEqual({ success: false, status: 400, error: error400 });
    expect(await t.trackLead({ customerKey: 'u' })).toMatchObject({ success: false, status: 0, error: { code: 'network_error' } });
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'lead', 400, error400);
  });

  it('makes no call without a click id or before init()', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/', f);
    const t = await load();
    expect(await t.trackLead({ customerKey: 'u' })).toMatchObject({ success: false, status: 0, error: { code: 'not_initialized' } });
    t.init({ apiBase: API });
    expect(await t.trackLead({ customerKey: 'u' })).toMatchObject({ success: false, status: 0, error: { code: 'no_click_id' } });
    expect(f).not.toHaveBeenCalled();
    // Expected situations are not errors.
    expect(errors).not.toHaveBeenCalled();
  });
});

describe('debug', () => {
  it('logs info only with debug: true, always with the prefix', async () => {
    for (const debug of [false, true]) {
      infos.mockClear();
      stubPage('https://www.shop.test/?aff=pat20', fakeFetch(clickOk()));
      const t = await load();
      t.init({ apiBase: API, debug });
      await t.track();
      if (debug) {
        expect(infos).toHaveBeenCalled();
        for (const call of infos.mock.calls) expect(call[0]).toBe('[Reftrack]');
      } else expect(infos).not.toHaveBeenCalled();
    }
  });
});

describe('misconfiguration', () => {
  it('turns a malformed apiBase into a logged failure, not an exception', async () => {
    const f = fakeFetch(clickOk());
    stubPage('https://www.shop.test/?aff=pat20', f);
    const t = await load();
    t.init({ apiBase: 'track.example.com' });
    expect(await t.track()).toBeNull();
    expect(f).not.toHaveBeenCalled();
    expect(errors).toHaveBeenCalledWith('[Reftrack]', 'click', 0, expect.objectContaining({ code: 'network_error' }));
  });
});
