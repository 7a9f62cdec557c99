import { existsSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const bundle = new URL('../dist/tracker.iife.js', import.meta.url);

describe('served bundle', () => {
  it('exists (the build runs before the tests)', () => {
    expect(existsSync(bundle), 'dist/tracker.iife.js is missing: run the build first').toBe(true);
  });

  it('stays under 1,500 bytes minified and gzipped', () => {
    const gzipped = gzipSync(readFileSync(bundle)).length;
    expect(gzipped).toBeLessThan(1500);
  });

  it('is a plain script: no module syntax, no source comments', () => {
    const code = readFileSync(bundle, 'utf8');
    expect(code).not.toMatch(/^\s*(import|export)\b/m);
    expect(code).not.toContain('/*');
  });
});
