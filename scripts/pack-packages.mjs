#!/usr/bin/env node
// `pnpm pack-packages [folder]`: packs every public package (contract, sdk, cli, tracker) into a
// folder (default ./packed) as the registry would get them (pnpm pack turns `workspace:*` into the
// real version), and prints how to install them into a project outside this repository. This is
// the install path until the packages are on the registry; the packaging test uses it too.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));
/** The public packages, in dependency order (the contract first). */
export const PUBLIC_PACKAGES = ['contract', 'sdk', 'cli', 'tracker'];

/** Packs each public package into `dest`; returns `{ name: tarball path }`. The packages must be built. */
export function packPublicPackages(dest) {
  fs.mkdirSync(dest, { recursive: true });
  const tarballs = {};
  for (const dir of PUBLIC_PACKAGES) {
    const cwd = path.join(repoRoot, 'packages', dir);
    const { name, version } = JSON.parse(fs.readFileSync(path.join(cwd, 'package.json'), 'utf8'));
    if (!fs.existsSync(path.join(cwd, 'dist'))) throw new Error(`${name} is not built: run \`pnpm build\` first`);
    execFileSync('pnpm', ['pack', '--pack-destination', dest], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const file = path.join(dest, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
    if (!fs.existsSync(file)) throw new Error(`pnpm pack did not write ${file}`);
    tarballs[name] = file;
  }
  return tarballs;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dest = path.resolve(process.argv[2] ?? path.join(repoRoot, 'packed'));
  const t = packPublicPackages(dest);
  const q = (f) => JSON.stringify(f);
  process.stdout.write(
    `Packed into ${dest}:\n${Object.values(t).map((f) => `  ${f}`).join('\n')}\n\n` +
      `In your project (the SDK needs the contract tarball beside it):\n` +
      `  npm install ${q(t['@reftrack/contract'])} ${q(t['@reftrack/sdk'])}\n` +
      `The CLI, anywhere:\n` +
      `  npm install -g ${q(t['@reftrack/cli'])}\n` +
      `The tracker for a bundled front end:\n` +
      `  npm install ${q(t['@reftrack/contract'])} ${q(t['@reftrack/tracker'])}\n`,
  );
}
