/** Device, OS and browser from a User-Agent string (ua-parser-js 1.x, MIT). */
import { UAParser } from 'ua-parser-js';

export interface DeviceInfo {
  device_type: string | null;
  device_os: string | null;
  browser_name: string | null;
}

// Real traffic repeats a small set of User-Agent strings; parsing is the costliest step of a click.
const CACHE_LIMIT = 2000;
const cache = new Map<string, DeviceInfo>();

export function parseUserAgent(ua: string | undefined): DeviceInfo {
  if (!ua) return { device_type: null, device_os: null, browser_name: null };
  const key = ua.slice(0, 512);
  const hit = cache.get(key);
  if (hit) return hit;
  const result = new UAParser(key).getResult();
  const info: DeviceInfo = {
    // ua-parser leaves the type empty for desktop browsers.
    device_type: result.device.type ?? (result.browser.name ? 'desktop' : null),
    device_os: result.os.name ?? null,
    browser_name: result.browser.name ?? null,
  };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, info);
  return info;
}
