import { describe, expect, it } from 'vitest';
import { domainCandidates, writeCookie } from '../src/domain.js';
import { FakeCookieJar } from './fake-browser.js';

describe('domainCandidates', () => {
  it('lists suffixes of two labels and more, shortest first, then host-only', () => {
    expect(domainCandidates('shop.example.co.uk')).toEqual(['.co.uk', '.example.co.uk', '.shop.example.co.uk', '']);
    expect(domainCandidates('www.shop.test')).toEqual(['.shop.test', '.www.shop.test', '']);
    expect(domainCandidates('example.com')).toEqual(['.example.com', '']);
  });

  it('gives localhost, IPv4 and IPv6 hosts a host-only cookie', () => {
    expect(domainCandidates('localhost')).toEqual(['']);
    expect(domainCandidates('127.0.0.1')).toEqual(['']);
    expect(domainCandidates('[::1]')).toEqual(['']);
  });
});

describe('writeCookie on the detected root domain', () => {
  const write = (jar: FakeCookieJar, host: string) => writeCookie(jar, domainCandidates(host), 'reftrack_click_id', 'clk_1', 60, false);

  it('lands on the registrable domain under a two-label public suffix', () => {
    const jar = new FakeCookieJar('shop.example.co.uk');
    expect(write(jar, 'shop.example.co.uk')).toBe('.example.co.uk');
    expect([...jar.stored.values()]).toEqual([expect.objectContaining({ name: 'reftrack_click_id', value: 'clk_1', domain: '.example.co.uk' })]);
    // `.co.uk` was tried first and refused.
    expect(jar.writes[0]).toContain('Domain=.co.uk');
  });

  it('lands on .shop.test for www.shop.test and on .user.github.io under a private suffix', () => {
    const www = new FakeCookieJar('www.shop.test');
    expect(write(www, 'www.shop.test')).toBe('.shop.test');
    const gh = new FakeCookieJar('docs.user.github.io');
    expect(write(gh, 'docs.user.github.io')).toBe('.user.github.io');
  });

  it('leaves nothing else behind: refused attempts store nothing', () => {
    const jar = new FakeCookieJar('a.b.shop.example.co.uk');
    expect(write(jar, 'a.b.shop.example.co.uk')).toBe('.example.co.uk');
    expect(jar.stored.size).toBe(1);
  });

  it('writes host-only on localhost and on an IP', () => {
    for (const host of ['localhost', '127.0.0.1']) {
      const jar = new FakeCookieJar(host);
      expect(write(jar, host)).toBe('');
      expect(jar.writes).toEqual(['reftrack_click_id=clk_1;Max-Age=60;Path=/;SameSite=Lax']);
    }
  });

  it('uses a given Domain only, and answers undefined when the browser refuses it', () => {
    const jar = new FakeCookieJar('www.shop.test');
    expect(writeCookie(jar, ['.other.test'], 'reftrack_click_id', 'clk_1', 60, false)).toBeUndefined();
    expect(jar.stored.size).toBe(0);
    expect(writeCookie(jar, ['.www.shop.test'], 'reftrack_click_id', 'clk_1', 60, false)).toBe('.www.shop.test');
  });

  it('answers undefined when cookies are switched off', () => {
    const jar = new FakeCookieJar('www.shop.test', undefined, false, false);
    expect(write(jar, 'www.shop.test')).toBeUndefined();
  });

  it('fails a Secure cookie on http, as a browser does', () => {
    const jar = new FakeCookieJar('www.shop.test');
    expect(writeCookie(jar, domainCandidates('www.shop.test'), 'reftrack_click_id', 'clk_1', 60, true)).toBeUndefined();
  });
});
