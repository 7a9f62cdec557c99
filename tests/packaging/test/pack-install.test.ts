/**
 * The public packages as a user gets them: each is packed (`pnpm pack`, as `pnpm publish` would
 * send it), the tarballs are installed with npm into a fresh project in the system's temporary
 * folder, outside the workspace (so nothing resolves through its node_modules), and there:
 * ESM imports, CommonJS requires, `tsc --noEmit` on a typed example, and the `reftrack` binary.
 * The registry is used only for the packages' third-party dependencies and TypeScript.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packPublicPackages, PUBLIC_PACKAGES, repoRoot } from '../../../scripts/pack-packages.mjs';

const REPO_URL = 'https://github.com/reftrack/reftrack';
const PACKAGES = PUBLIC_PACKAGES.map((dir) => ({ dir, name: `@reftrack/${dir}` }));
const workspaceVersion = (pkg: string) => (JSON.parse(fs.readFileSync(path.join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;

let tmp = '';
let app = '';
let tarballs: Record<string, string> = {};

/** The environment without pnpm's and npm's per-run variables, so npm behaves as in a user's shell. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(npm|pnpm)_(config|package|lifecycle|execpath|node_execpath)/i.test(k) && !k.startsWith('REFTRACK_')) env[k] = v;
  return env;
}

function run(command: string, args: string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(command, args, { cwd: app, env: cleanEnv(), encoding: 'utf8', input, timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const node = (args: string[]) => run(process.execPath, args);
const packedJson = (name: string) => JSON.parse(execFileSync('tar', ['xzf', tarballs[name]!, '-O', 'package/package.json'], { encoding: 'utf8' })) as Record<string, any>;
const packedFile = (name: string, file: string) => execFileSync('tar', ['xzf', tarballs[name]!, '-O', `package/${file}`], { encoding: 'utf8' });

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-pack-'));
  tarballs = packPublicPackages(path.join(tmp, 'tarballs'));
  app = path.join(tmp, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'reftrack-install-check', version: '0.0.0', private: true }, null, 2));
  // The four tarballs together: the SDK's and the tracker's `@reftrack/contract@0.1.0` is the contract tarball.
  const install = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...Object.values(tarballs), `typescript@${workspaceVersion('typescript')}`, `@types/node@${workspaceVersion('@types/node')}`]);
  if (install.code !== 0) throw new Error(`npm install failed (${install.code}):\n${install.stderr}\n${install.stdout}`);
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the packed tarballs', () => {
  it('hold dist, README, CHANGELOG and LICENSE, and no sources or tests', () => {
    for (const { name } of PACKAGES) {
      const files = execFileSync('tar', ['tzf', tarballs[name]!], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, ''));
      for (const required of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) expect(files, name).toContain(required);
      expect(files.some((f) => f.startsWith('dist/')), name).toBe(true);
      expect(files.filter((f) => !['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'].includes(f) && !f.startsWith('dist/')), name).toEqual([]);
    }
  });

  it('declare real versions instead of workspace:*, engines, a license, the repository and public access', () => {
    for (const { name, dir } of PACKAGES) {
      const pkg = packedJson(name);
      expect(JSON.stringify(pkg), name).not.toContain('workspace:');
      expect(pkg.engines?.node, name).toMatch(/^>=20(\.\d+){0,2}$/);
      expect(pkg.license, name).toBe('MIT');
      expect(pkg.repository, name).toEqual({ type: 'git', url: `git+${REPO_URL}.git`, directory: `packages/${dir}` });
      expect(pkg.publishConfig, name).toEqual({ access: 'public' });
      expect(pkg.files, name).toEqual(['dist', 'README.md', 'CHANGELOG.md', 'LICENSE']);
      for (const dep of Object.keys(pkg.dependencies ?? {})) if (dep.startsWith('@reftrack/')) expect(pkg.dependencies[dep], `${name} → ${dep}`).toBe(packedJson(dep).version);
    }
  });

  it('export types first, then ESM (import) and CommonJS (require), each with its own declaration file', () => {
    for (const name of ['@reftrack/contract', '@reftrack/sdk', '@reftrack/tracker']) {
      const root = packedJson(name).exports['.'];
      expect(Object.keys(root), name).toEqual(['import', 'require']);
      expect(root.import, name).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' });
      expect(root.require, name).toEqual({ types: './dist/index.d.cts', default: './dist/index.cjs' });
    }
    expect(packedJson('@reftrack/cli').bin).toEqual({ reftrack: 'dist/reftrack.js' });
  });

  it('have READMEs whose links work from the registry: absolute links to files of the repository, or files in the package', () => {
    for (const { name } of PACKAGES) {
      const readme = packedFile(name, 'README.md');
      const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
      expect(links.length, name).toBeGreaterThan(0);
      for (const link of links) {
        if (/^https?:\/\//.test(link)) {
          const inRepo = new RegExp(`^${REPO_URL}/(?:blob|tree)/main/([^#]+)`).exec(link);
          if (inRepo) expect(fs.existsSync(path.join(repoRoot, inRepo[1]!)), `${name}: ${link}`).toBe(true);
          continue;
        }
        // A relative link resolves inside the package on the registry page: the file must be in the tarball.
        expect(() => packedFile(name, link.split('#')[0]!), `${name}: ${link}`).not.toThrow();
      }
    }
  });
});

describe('installed into an npm project outside the workspace', () => {
  it('is not inside the workspace', () => {
    expect(path.relative(repoRoot, app).startsWith('..')).toBe(true);
    expect(fs.realpathSync(path.join(app, 'node_modules', '@reftrack', 'sdk'))).toBe(path.join(fs.realpathSync(app), 'node_modules', '@reftrack', 'sdk'));
  });

  it('imports as ESM', () => {
    const script = `
      import { Reftrack, SDK_VERSION, APIError } from '@reftrack/sdk';
      import { ROUTES, ERRORS, trackerSnippet } from '@reftrack/contract';
      import { init, getClickId } from '@reftrack/tracker';
      const client = new Reftrack({ apiKey: 'aff_example0000000000000000000000000', baseUrl: 'http://127.0.0.1:1' });
      console.log(JSON.stringify({ sdk: SDK_VERSION, route: ROUTES.trackSale.path, msg: ERRORS.saleDuplicate.message, tag: trackerSnippet('https://t.example', 1), tracker: [typeof init, typeof getClickId], api: typeof APIError, base: client.baseUrl }));`;
    const r = node(['--input-type=module', '-e', script]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      sdk: packedJson('@reftrack/sdk').version,
      route: '/api/v1/track/sale',
      msg: 'Duplicate transaction_id. This sale has already been recorded.',
      tag: '<script src="https://t.example/tracker.js" data-reftrack-program-id="1" defer></script>',
      tracker: ['function', 'function'],
      api: 'function',
      base: 'http://127.0.0.1:1',
    });
  });

  it('requires as CommonJS', () => {
    const script = `
      const { Reftrack, SDK_VERSION } = require('@reftrack/sdk');
      const { ROUTES } = require('@reftrack/contract');
      const { init } = require('@reftrack/tracker');
      const iife = require.resolve('@reftrack/tracker/tracker.iife.js');
      console.log(JSON.stringify({ sdk: SDK_VERSION, ctor: typeof Reftrack, route: ROUTES.readiness.path, init: typeof init, iife: require('fs').statSync(iife).size > 0 }));`;
    const r = node(['-e', script]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ sdk: packedJson('@reftrack/sdk').version, ctor: 'function', route: '/api/v1/programs/me/readiness', init: 'function', iife: true });
  });

  it('type-checks a typed example with tsc --noEmit, as ESM and as CommonJS (strict, library types checked too)', () => {
    const example = (kind: 'esm' | 'cjs') => `
      import { Reftrack, APIError, type TrackSaleResult } from '@reftrack/sdk';
      import { ERRORS, type SaleRequest } from '@reftrack/contract';
      import { getClickId } from '@reftrack/tracker';

      export async function report(reftrack: Reftrack): Promise<number> {
        const body: SaleRequest = { transaction_id: 'in_1', amount_cents: 4900, currency: 'usd' };
        const result: TrackSaleResult = await reftrack.trackSale({ customerExternalId: 'user_42', amount: body.amount_cents!, invoiceId: body.transaction_id! });
        // A duplicate names the recorded sale: a number, never null.
        if (result.duplicate) return result.saleId;
        if ('attributed' in result.data && result.data.attributed) return result.data.sale_id;
        return 0;
      }
      export const kind: '${kind}' = '${kind}';
      export const clickId: string | null = getClickId();
      export const isApiError = (e: unknown): boolean => e instanceof APIError || ERRORS.saleFailed.status === 500;
    `;
    fs.writeFileSync(path.join(app, 'example.mts'), example('esm'));
    fs.writeFileSync(path.join(app, 'example.cts'), example('cjs'));
    fs.writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['example.mts', 'example.cts'] }),
    );
    const r = node([path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it('runs the reftrack binary: --version, --help and a command\'s help', () => {
    const version = run('npx', ['--no-install', 'reftrack', '--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(packedJson('@reftrack/cli').version);
    const help = run('npx', ['--no-install', 'reftrack', '--help']);
    expect(help.code, help.stderr).toBe(0);
    for (const command of ['login', 'init', 'programs', 'keys', 'status', 'test-event']) expect(help.stdout).toContain(command);
    const keys = run('npx', ['--no-install', 'reftrack', 'keys', 'generate', '--help']);
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stdout).toContain('<program-id>');
  });

  it('the CLI reports a server it cannot reach with its address, in one JSON document (exit 1)', () => {
    const r = run('npx', ['--no-install', 'reftrack', 'status', '--json', '--base-url', 'http://127.0.0.1:1', '--api-key', 'aff_example0000000000000000000000000']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'network_error', message: expect.stringContaining('http://127.0.0.1:1') });
  });
});
