import { cookieString, readCookie, type Jar } from './cookies.js';

/**
 * Cookie Domain values to try for `host`, shortest first, ending with '' (host-only):
 * `shop.example.co.uk` → `.co.uk`, `.example.co.uk`, `.shop.example.co.uk`, ''.
 * A one-label suffix (`.uk`) is never registrable, so the list starts with two labels.
 * IPv4 hosts cannot hold domain cookies; IPv6 (`[::1]`) and single-label hosts such as localhost
 * have no dot; all three get host-only.
 */
export function domainCandidates(host: string): string[] {
  const labels = /^[\d.]+$/.test(host) ? [] : host.split('.');
  return labels
    .slice(1)
    .map((_, i) => '.' + labels.slice(-i - 2).join('.'))
    .concat('');
}

/**
 * Writes the cookie on the first Domain the browser accepts and answers that Domain, or
 * undefined when every write was refused.
 *
 * This finds the registrable root domain without a public-suffix list, which would blow the size
 * budget: browsers refuse cookies on public suffixes, so the shortest accepted suffix is the
 * registrable domain. The cookie itself is the probe: a refused write leaves nothing behind and an
 * accepted one is the result, so no separate probe cookie needs deleting.
 */
export function writeCookie(jar: Jar, domains: string[], name: string, value: string, maxAgeSeconds: number, secure: boolean): string | undefined {
  for (const d of domains) {
    jar.cookie = cookieString(name, value, maxAgeSeconds, d, secure);
    if (readCookie(jar, name) == value) return d;
  }
}
