/**
 * Startup: measured and printed, not asserted (timing belongs to `pnpm bench`, not to a pass/fail
 * test on a shared machine). What is asserted is what keeps startup small: one bundle file, and
 * conf/open only behind dynamic imports.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import { describe, expect, it } from 'vitest';
import { BIN } from './helpers/run-cli.js';

describe('startup', () => {
  it('runs --help 5 times and prints the median time', () => {
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = process.hrtime.bigint();
      const out = execFileSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
      samples.push(Number(process.hrtime.bigint() - start) / 1e6);
      expect(out).toContain('Usage: reftrack');
    }
    samples.sort((a, b) => a - b);
    console.log(`reftrack --help: median ${samples[2]!.toFixed(1)} ms over 5 runs (${samples.map((s) => s.toFixed(0)).join(', ')})`);
  });

  it('is one ESM file with a node shebang, loading conf and open only on demand', () => {
    const source = fs.readFileSync(BIN, 'utf8');
    expect(source.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(source).not.toMatch(/^import[^;]*from\s*["'](conf|open|undici)["']/m);
    expect(source).toMatch(/import\(\s*["']conf["']\s*\)/);
    expect(source).toMatch(/import\(\s*["']open["']\s*\)/);
    // Nothing is imported statically from node_modules: commander and the contract are bundled.
    const staticImports = [...source.matchAll(/^import[^;]*from\s*["']([^"']+)["']/gm)].map((m) => m[1]).filter((m) => !m!.startsWith('node:') && !builtinModules.includes(m!));
    expect(staticImports).toEqual([]);
    if (process.platform !== 'win32') expect(fs.statSync(BIN).mode & 0o111).not.toBe(0);
  });
});
