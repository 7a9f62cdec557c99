// Startup benchmark: how long `reftrack --help` takes, end to end, as a person would feel it.
// Prints the median (and spread) of N runs beside a bare `node -e 0` for scale. Run after a build:
//   pnpm --filter @reftrack/cli build && pnpm --filter @reftrack/cli bench [runs]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'dist/reftrack.js');
if (!fs.existsSync(bin)) {
  console.error(`bench: ${bin} is missing; run the build first.`);
  process.exit(1);
}
const runs = Number(process.argv[2] ?? 20);

function time(args) {
  const samples = [];
  // Two warm-up runs fill the OS file cache; a cold first run measures the disk, not the CLI.
  for (let i = 0; i < runs + 2; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: 'ignore' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}`);
    if (i >= 2) samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return { min: samples[0], median: at(0.5), p90: at(0.9) };
}

const fmt = (t) => `median ${t.median.toFixed(1)} ms (min ${t.min.toFixed(1)}, p90 ${t.p90.toFixed(1)})`;
const node = time(['-e', '0']);
const help = time([bin, '--help']);
const version = execFileSync(process.execPath, ['--version']).toString().trim();
console.log(`reftrack --help: ${fmt(help)} over ${runs} runs`);
console.log(`node -e 0:       ${fmt(node)} (Node ${version}; the floor no CLI can go under)`);
console.log(`reftrack's own share: ${(help.median - node.median).toFixed(1)} ms`);
