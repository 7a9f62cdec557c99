/**
 * Framing and headers (docs/security.md, "Pages"): every HTML page the server sends carries a
 * content security policy with `frame-ancestors 'none'` (and X-Frame-Options DENY for older
 * browsers), from helmet; a page's inline blocks are allowed by their hashes, nothing else inline.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const PAGES = ['/dev-idp/sign-in', '/dev-idp/sign-in?return_to=/programs', '/signed-out', '/docs/errors', '/', '/programs/1/events'];

/** The directives of a Content-Security-Policy header, by name. */
function directives(header: string | null): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name, values);
  }
  return map;
}

const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const inline = (html: string, tag: 'script' | 'style') => [...html.matchAll(new RegExp(`<${tag}(?![^>]*\\bsrc=)[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]);

describe(`[${dbKind}] pages: framing and content security policy`, () => {
  it('every HTML page forbids framing and sends a content security policy without unsafe-inline', async () => {
    for (const path of PAGES) {
      const res = await s.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^text\/html/);
      const csp = directives(res.headers.get('content-security-policy'));
      expect(csp.get('frame-ancestors'), path).toEqual(["'none'"]);
      expect(csp.get('object-src'), path).toEqual(["'none'"]);
      expect(csp.get('base-uri'), path).toEqual(["'none'"]);
      expect(res.headers.get('content-security-policy'), path).not.toContain('unsafe-inline');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
  });

  it('each inline script and style block is allowed by its own hash, so the page works under its policy', async () => {
    for (const path of ['/dev-idp/sign-in', '/signed-out', '/docs/errors']) {
      const res = await s.get(path);
      const csp = directives(res.headers.get('content-security-policy'));
      const scripts = inline(res.text, 'script');
      const styles = inline(res.text, 'style');
      for (const block of scripts) expect(csp.get('script-src'), path).toContain(sha(block));
      for (const block of styles) expect(csp.get('style-src'), path).toContain(sha(block));
      if (scripts.length === 0) expect(csp.get('script-src'), path).toEqual(["'none'"]);
    }
  });

  it('the CLI login confirmation page, and its refusal of an unknown login, carry the headers too (no script, the style by its hash)', async () => {
    const start = await s.post('/api/v1/cli/auth/start', {});
    for (const [path, status] of [[`/cli/login?state=${start.body.data.state}`, 200], ['/cli/login?state=abcdefghijklmnopqrstuvwx', 400]] as const) {
      const res = await s.get(path);
      expect(res.status, path).toBe(status);
      const csp = directives(res.headers.get('content-security-policy'));
      expect(csp.get('frame-ancestors'), path).toEqual(["'none'"]);
      expect(csp.get('script-src'), path).toEqual(["'none'"]);
      for (const block of inline(res.text, 'style')) expect(csp.get('style-src'), path).toContain(sha(block));
    }
  });

  it('HSTS only where the public address is HTTPS', async () => {
    expect((await s.get('/docs/errors')).headers.get('strict-transport-security')).toBeNull();
    const secure = await startTestServer({ env: { PUBLIC_BASE_URL: 'https://app.reftrack.test', ALLOWED_HOSTS: '127.0.0.1', ALLOW_DEV_SIGN_IN: 'true' } });
    try {
      expect((await secure.get('/docs/errors')).headers.get('strict-transport-security')).toBe('max-age=31536000');
    } finally {
      await secure.close();
    }
  });
});
