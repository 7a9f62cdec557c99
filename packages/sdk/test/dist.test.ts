/** The built package (dist/) loads by its own name from both module systems. Run `pnpm build` first. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED = ['Reftrack', 'ReftrackError', 'RateLimitError', 'KeyRotationRequiredError', 'ConnectionError', 'handleReferral', 'referralMiddleware', 'reportStripeRenewal'];

function runNode(script: string): string {
  return execFileSync(process.execPath, ['-e', script], { cwd: packageDir, encoding: 'utf8', env: { ...process.env, REFTRACK_API_KEY: 'aff_dist_check' } });
}

describe('built package', () => {
  it('has been built', () => {
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts']) {
      expect(existsSync(new URL(`../${file}`, import.meta.url)), `${file} is missing: run pnpm build in packages/sdk`).toBe(true);
    }
  });

  it("loads with require('@reftrack/sdk')", () => {
    const out = runNode(`
      const sdk = require('@reftrack/sdk');
      const client = new sdk.Reftrack({ baseUrl: 'http://127.0.0.1:9' });
      const err = new sdk.RateLimitError({ status: 429, code: 'rate_limited', message: 'slow down', retryAfterSeconds: 3 });
      console.log(JSON.stringify({ names: Object.keys(sdk), baseUrl: client.baseUrl, isBase: err instanceof sdk.ReftrackError, name: err.name }));
    `);
    const result = JSON.parse(out) as { names: string[]; baseUrl: string; isBase: boolean; name: string };
    expect(result.names).toEqual(expect.arrayContaining(EXPECTED));
    expect(result).toMatchObject({ baseUrl: 'http://127.0.0.1:9', isBase: true, name: 'RateLimitError' });
  });

  it("loads with import('@reftrack/sdk')", () => {
    const out = runNode(`
      import('@reftrack/sdk').then((sdk) => {
        const client = new sdk.Reftrack({ baseUrl: 'http://127.0.0.1:9' });
        console.log(JSON.stringify({ names: Object.keys(sdk), baseUrl: client.baseUrl, version: sdk.SDK_VERSION }));
      });
    `);
    const result = JSON.parse(out) as { names: string[]; baseUrl: string; version: string };
    expect(result.names).toEqual(expect.arrayContaining(EXPECTED));
    expect(result.baseUrl).toBe('http://127.0.0.1:9');
    expect(result.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('resolves types for both conditions', () => {
    const out = runNode(`
      const pkg = require('@reftrack/sdk/package.json');
      console.log(JSON.stringify(pkg.exports['.']));
    `);
    expect(JSON.parse(out)).toEqual({
      import: { types: './dist/index.d.ts', default: './dist/index.js' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
    });
  });
});
