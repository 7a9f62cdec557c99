import { afterEach, describe, expect, it, vi } from 'vitest';
import { clickBody } from '../src/click.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('clickBody', () => {
  it('describes the page, the screen and the browser', () => {
    vi.stubGlobal('location', { href: 'https://www.shop.test/p?aff=pat20' });
    vi.stubGlobal('document', { title: 'Product', referrer: 'https://news.test/' });
    vi.stubGlobal('screen', { width: 1920, height: 1080 });
    vi.stubGlobal('innerWidth', 1280);
    vi.stubGlobal('innerHeight', 720);
    vi.stubGlobal('navigator', { language: 'fr-FR', userAgent: 'UA/1.0' });
    const body = clickBody('sess1', null);
    expect(body).toEqual({
      affiliate_url: 'https://www.shop.test/p?aff=pat20',
      page_url: 'https://www.shop.test/p?aff=pat20',
      page_title: 'Product',
      referrer_url: 'https://news.test/',
      session_id: 'sess1',
      screen_resolution: '1920x1080',
      viewport_size: '1280x720',
      language: 'fr-FR',
      timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      user_agent: 'UA/1.0',
      existing_click_id: undefined,
    });
    // Absent values are left out of the JSON, not sent as null.
    expect(JSON.parse(JSON.stringify(clickBody(undefined, null)))).not.toHaveProperty('existing_click_id');
    expect(JSON.parse(JSON.stringify(clickBody(undefined, null)))).not.toHaveProperty('session_id');
    expect(clickBody('s', 'clk_old').existing_click_id).toBe('clk_old');
  });
});
