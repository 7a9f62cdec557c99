import { vi } from 'vitest';
import { FakeCookieJar } from './fake-browser.js';

export interface Answer {
  status: number;
  body?: unknown;
}

/** A fetch double: answers in order (the last answer repeats), or rejects for `'network'`. */
export function fakeFetch(...answers: (Answer | 'network')[]) {
  let i = 0;
  return vi.fn(async (_url: URL | string, _init?: RequestInit) => {
    const a = answers[Math.min(i++, answers.length - 1)];
    if (a === 'network') throw new TypeError('Failed to fetch');
    return new Response(a.body === undefined ? 'not json' : JSON.stringify(a.body), { status: a.status });
  });
}

export const clickOk = (id = 'clk_1', days = 60): Answer => ({
  status: 200,
  body: { success: true, click_id: id, partner_code: 'pat', cookie_window_days: days },
});

/**
 * Stubs the globals the tracker reads, for a page at `url` with the given cookie jar.
 * Answers the objects a test inspects.
 */
export function stubPage(url: string, fetchFn: ReturnType<typeof fakeFetch>, jar?: FakeCookieJar) {
  const u = new URL(url);
  const cookies = jar ?? new FakeCookieJar(u.hostname, undefined, u.protocol === 'https:');
  const location = { href: u.href, hostname: u.hostname, protocol: u.protocol, origin: u.origin };
  const session: Record<string, string> = {};
  vi.stubGlobal('location', location);
  vi.stubGlobal('document', Object.assign(cookies, { title: 'Page', referrer: '' }));
  vi.stubGlobal('screen', { width: 800, height: 600 });
  vi.stubGlobal('innerWidth', 800);
  vi.stubGlobal('innerHeight', 500);
  vi.stubGlobal('navigator', { language: 'en', userAgent: 'test-agent' });
  vi.stubGlobal('sessionStorage', session);
  vi.stubGlobal('fetch', fetchFn);
  return {
    cookies,
    session,
    /** Moves the page, as a single-page app's router does. */
    navigate: (to: string) => {
      const n = new URL(to, location.href);
      Object.assign(location, { href: n.href, hostname: n.hostname, protocol: n.protocol, origin: n.origin });
    },
  };
}

export const sentBody = (f: ReturnType<typeof fakeFetch>, call = 0) => JSON.parse(f.mock.calls[call][1]!.body as string);
