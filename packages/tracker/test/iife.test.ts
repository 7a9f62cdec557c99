/** The built IIFE bundle, run as a script tag would run it, in a node:vm context. */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clickOk, fakeFetch } from './browser-stubs.js';
import { FakeCookieJar } from './fake-browser.js';

const code = readFileSync(new URL('../dist/tracker.iife.js', import.meta.url), 'utf8');

interface Api {
  init(o?: object): void;
  consent(): void;
  track(): Promise<string | null>;
  getClickId(): string | null;
}

/** Runs the bundle for a page at `pageUrl` with a script tag of `src` and `dataset`. */
function runScript(pageUrl: string, src: string, dataset: Record<string, string>, fetchFn = fakeFetch(clickOk())) {
  const u = new URL(pageUrl);
  const document = Object.assign(new FakeCookieJar(u.hostname, undefined, u.protocol === 'https:'), { title: 'T', referrer: '', currentScript: { src, dataset } });
  const g: Record<string, unknown> = {
    document,
    location: { href: u.href, hostname: u.hostname, protocol: u.protocol, origin: u.origin },
    screen: { width: 1, height: 1 },
    innerWidth: 1,
    innerHeight: 1,
    navigator: { language: 'en', userAgent: 'ua' },
    sessionStorage: {},
    fetch: fetchFn,
    console,
    URL,
    URLSearchParams,
  };
  g.window = g;
  const context = vm.createContext(g);
  const run = () => vm.runInContext(code, context);
  run();
  return { fetchFn, run, api: () => g.Reftrack as Api, document };
}

beforeEach(() => {
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('script tag', () => {
  it('starts by itself and calls the origin it was served from', async () => {
    const { fetchFn, api } = runScript('https://www.shop.test/?aff=pat20', 'https://cdn.reftrack.test/tracker.js', { reftrackProgramId: '1' });
    expect(await api().track()).toBe('clk_1');
    expect(String(fetchFn.mock.calls[0][0])).toBe('https://cdn.reftrack.test/api/v1/track/click');
  });

  it('takes the API base from data-reftrack-api-base', async () => {
    const { fetchFn, api } = runScript('https://www.shop.test/?aff=pat20', 'https://cdn.test/t.js', { reftrackApiBase: 'https://api.test' });
    await api().track();
    expect(String(fetchFn.mock.calls[0][0])).toBe('https://api.test/api/v1/track/click');
  });

  it('waits for Reftrack.init() with data-reftrack-manual, keeping the script origin as default', async () => {
    const { fetchFn, api } = runScript('https://www.shop.test/?aff=pat20', 'https://cdn.reftrack.test/tracker.js', { reftrackManual: '' });
    expect(await api().track()).toBeNull();
    expect(fetchFn).not.toHaveBeenCalled();
    api().init({ cookieDomain: '.www.shop.test' });
    expect(await api().track()).toBe('clk_1');
    expect(String(fetchFn.mock.calls[0][0])).toBe('https://cdn.reftrack.test/api/v1/track/click');
  });

  it('waits for Reftrack.consent() with data-reftrack-require-consent', async () => {
    const { fetchFn, api, document } = runScript('https://www.shop.test/?aff=pat20', 'https://cdn.test/t.js', { reftrackRequireConsent: '' });
    expect(await api().track()).toBeNull();
    expect(fetchFn).not.toHaveBeenCalled();
    expect(document.writes).toEqual([]);
    api().consent();
    expect(await api().track()).toBe('clk_1');
  });

  it('leaves a second copy of the script inert', async () => {
    const { fetchFn, api, run } = runScript('https://www.shop.test/?aff=pat20', 'https://cdn.test/t.js', {});
    const first = api();
    run();
    expect(api()).toBe(first);
    await first.track();
    expect(fetchFn).toHaveBeenCalledTimes(1);
  });
});
