// Subprocess tests run dist/reftrack.js; build it from the current source first so they never
// test a stale bundle (esbuild takes well under a second).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/tsup/dist/cli-default.js')], { cwd: root, stdio: 'pipe' });
}
