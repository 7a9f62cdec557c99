/**
 * Device, OS and browser from a User-Agent string (ua-parser-js 1.x, MIT), and whether it is a
 * known bot, crawler or link-preview fetcher (isbot 5.x, Unlicense: a maintained list of patterns,
 * docs/analytics.md "Bots").
 */
import { UAParser } from 'ua-parser-js';
import { isbotMatches } from 'isbot';
import { BRAND } from '@reftrack/contract';

/**
 * What isbot lists but Reftrack does not call a bot (docs/analytics.md, "Bots"): HTTP libraries,
 * command-line clients, API tools and the server SDK (named by the user agent's first product
 * token), and headless browsers. They reach the click route when an integration calls it from its
 * own server or test suite without forwarding the visitor's user agent: they say nothing about the
 * visitor, like a click without a user agent, and a client that records a click this way must still
 * see its lead and sale attributed (spec 3.1, 4.1). Crawlers, search engines and link-preview
 * fetchers (Googlebot, bingbot, facebookexternalhit, Slackbot, Twitterbot, LinkedInBot, …) stay bots.
 */
const INTEGRATION_CLIENT = new RegExp(
  `^(?:node|undici|axios|got|curl|wget|httpie|python|aiohttp|httpx|go-http-client|okhttp|java|apache-httpclient|jakarta|postman|insomnia|ruby|faraday|guzzle|php|libwww-perl|dart|rest-client|${BRAND.token}-)`,
  'i',
);
const HEADLESS_BROWSER = /^(?:headless|phantomjs)/i;

/** A known bot: isbot says so, and the agent is neither an integration's client nor only a headless browser. */
function isBotAgent(ua: string): boolean {
  if (INTEGRATION_CLIENT.test(ua.trimStart())) return false;
  const matches = isbotMatches(ua);
  return matches.length > 0 && !matches.every((m) => HEADLESS_BROWSER.test(m));
}

export interface DeviceInfo {
  device_type: string | null;
  device_os: string | null;
  browser_name: string | null;
  /** A known bot, crawler or link-preview fetcher: its clicks are flagged and counted nowhere. */
  is_bot: boolean;
}

// Real traffic repeats a small set of User-Agent strings; parsing is the costliest step of a click.
const CACHE_LIMIT = 2000;
const cache = new Map<string, DeviceInfo>();
const NO_AGENT: DeviceInfo = { device_type: null, device_os: null, browser_name: null, is_bot: false };

export function parseUserAgent(ua: string | undefined): DeviceInfo {
  // A click without a user agent is not called a bot: server-side integrations may send none.
  if (!ua) return NO_AGENT;
  const key = ua.slice(0, 512);
  const hit = cache.get(key);
  if (hit) return hit;
  const result = new UAParser(key).getResult();
  const info: DeviceInfo = {
    // ua-parser leaves the type empty for desktop browsers.
    device_type: result.device.type ?? (result.browser.name ? 'desktop' : null),
    device_os: result.os.name ?? null,
    browser_name: result.browser.name ?? null,
    // Checked once per distinct string, like the parse: the cache makes both free on a repeat.
    is_bot: isBotAgent(key),
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, info);
  return info;
}
