/** The first load stays light: the JavaScript that index.html loads is under 100 KB gzipped. */
import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const dist = new URL('../dist/', import.meta.url);
const LIMIT = 100 * 1024;

function firstLoadScripts(html: string): string[] {
  const srcs = [...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
  const preloads = [...html.matchAll(/<link\b[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g)].map((m) => m[1]);
  return [...new Set([...srcs, ...preloads])];
}

describe('built web app', () => {
  it('exists (the build runs before the tests)', () => {
    expect(existsSync(new URL('index.html', dist)), 'apps/web/dist/index.html is missing: run the build first').toBe(true);
  });

  it('loads under 100 KB of JavaScript, gzipped, on the first page', () => {
    const html = readFileSync(new URL('index.html', dist), 'utf8');
    const scripts = firstLoadScripts(html);
    expect(scripts.length).toBeGreaterThan(0);
    let total = 0;
    for (const src of scripts) {
      expect(src, 'scripts are served from the app itself').toMatch(/^\/assets\/[\w.-]+\.js$/);
      total += gzipSync(readFileSync(new URL(`.${src}`, dist)), { level: 9 }).length;
    }
    console.log(`first-load JavaScript: ${scripts.join(', ')} = ${(total / 1024).toFixed(1)} KB gzipped`);
    expect(total).toBeLessThan(LIMIT);
  });

  it('names its assets by content hash (so they can be cached for a year)', () => {
    const html = readFileSync(new URL('index.html', dist), 'utf8');
    for (const src of [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1])) expect(src).toMatch(/-[A-Za-z0-9_-]{8}\.(js|css)$/);
  });
});
