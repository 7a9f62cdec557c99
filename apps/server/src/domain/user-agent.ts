/**
 * Device, OS and browser from a User-Agent string (ua-parser-js 1.x, MIT), and whether it is a
 * known bot, crawler or link-preview fetcher (isbot 5.x, Unlicense: a maintained list of patterns,
 * docs/analytics.md "Bots").
 */
import { UAParser } from 'ua-parser-js';
import { isbot } from 'isbot';
import { BRAND } from '@reftrack/contract';

/**
 * The server SDK's own user agent (packages/sdk): it reaches a click only when the integration did
 * not forward its visitor's, so it says nothing about the visitor — not a bot, like no user agent.
 */
const SDK_AGENT = `${BRAND.token}-sdk-`;

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
    is_bot: isbot(key) && !key.startsWith(SDK_AGENT),
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, info);
  return info;
}
