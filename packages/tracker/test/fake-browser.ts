/**
 * A cookie store that behaves like a browser's for one host: it refuses Domain attributes that
 * are public suffixes or do not cover the host, refuses Secure cookies on http, deletes on
 * Max-Age <= 0, and answers `cookie` as `name=value; name=value`.
 */
export class FakeCookieJar {
  readonly stored = new Map<string, { name: string; value: string; domain: string; attrs: string[] }>();
  readonly writes: string[] = [];

  constructor(
    private readonly host: string,
    private readonly publicSuffixes: string[] = ['uk', 'co.uk', 'com', 'test', 'github.io'],
    private readonly https = false,
    /** A browser with cookies switched off accepts nothing. */
    private readonly enabled = true,
  ) {}

  get cookie(): string {
    return [...this.stored.values()].map((c) => `${c.name}=${c.value}`).join('; ');
  }

  set cookie(line: string) {
    this.writes.push(line);
    if (!this.enabled) return;
    const [pair, ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    const attr = (key: string) => attrs.find((a) => a.toLowerCase().startsWith(key.toLowerCase() + '='))?.split('=')[1];
    if (attrs.some((a) => a.toLowerCase() === 'secure') && !this.https) return;
    const domainAttr = attr('Domain');
    let domain = this.host;
    if (domainAttr !== undefined) {
      const d = domainAttr.replace(/^\./, '');
      if (this.publicSuffixes.includes(d)) return;
      if (d !== this.host && !this.host.endsWith('.' + d)) return;
      domain = '.' + d;
    }
    const key = `${name}@${domain}`;
    const maxAge = attr('Max-Age');
    if (maxAge !== undefined && Number(maxAge) <= 0) this.stored.delete(key);
    else this.stored.set(key, { name, value, domain, attrs: attrs.map((a) => a.trim()) });
  }
}
