import { describe, expect, it } from 'vitest';
import { cookieString, readCookie } from '../src/cookies.js';

describe('readCookie', () => {
  const jar = (cookie: string) => ({ cookie });

  it('finds a cookie first, in the middle and last', () => {
    expect(readCookie(jar('reftrack_click_id=clk_a; x=1'), 'reftrack_click_id')).toBe('clk_a');
    expect(readCookie(jar('x=1; reftrack_click_id=clk_b; y=2'), 'reftrack_click_id')).toBe('clk_b');
    expect(readCookie(jar('x=1; reftrack_click_id=clk_c'), 'reftrack_click_id')).toBe('clk_c');
  });

  it('does not match a cookie whose name only ends with the name', () => {
    expect(readCookie(jar('old_reftrack_click_id=clk_x'), 'reftrack_click_id')).toBeNull();
  });

  it('answers null for a missing or emptied cookie', () => {
    expect(readCookie(jar(''), 'reftrack_click_id')).toBeNull();
    expect(readCookie(jar('reftrack_click_id=; x=1'), 'reftrack_click_id')).toBeNull();
    expect(readCookie(jar('x=1; reftrack_click_id='), 'reftrack_click_id')).toBeNull();
  });
});

describe('cookieString', () => {
  it('writes Max-Age, Path=/ and SameSite=Lax, with Domain and Secure only when asked', () => {
    expect(cookieString('n', 'v', 86400, '', false)).toBe('n=v;Max-Age=86400;Path=/;SameSite=Lax');
    expect(cookieString('n', 'v', 60, '.shop.test', true)).toBe('n=v;Max-Age=60;Path=/;SameSite=Lax;Domain=.shop.test;Secure');
  });
});
