#!/usr/bin/env node
/**
 * What the click batch costs the event loop per click by itself: the click lane's ClickBatcher
 * (src/db/click-batcher.ts, bundled from the sources into a temporary directory of
 * node_modules/.cache) given batches of 20 clicks of the bench's kind — one link, a new visitor
 * each, the same dimensions — with a writer that commits nothing. It measures `submit`, the
 * batch's hand-off and its sums (the rows, the counters, the unique-click window, the rollup groups
 * and the `clicks.recorded` event), and the building of each click's write, which every variant
 * pays alike.
 *
 *   node apps/server/bench/click-batch-cost.mjs [--rounds 12] [--batches 2000]
 *
 * Prints the median and the fastest round in µs per click. On a shared host the rounds move by a
 * factor of two; instructions do not. For an A/B, count them with Valgrind, once with one round and
 * once with four, and divide the difference by the clicks of three rounds (3 × batches × 20):
 *
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node apps/server/bench/click-batch-cost.mjs --rounds 1
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null node apps/server/bench/click-batch-cost.mjs --rounds 4
 *
 * (Valgrind's "Collected" line; the bundling and the first round cancel out.) docs/performance.md,
 * "The batch's sums without string keys".
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'tsup';
import { medianBy } from './measure.mjs';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '12' }, batches: { type: 'string', default: '2000' } } });
const rounds = Number(values.rounds);
const batches = Number(values.batches);
if (!(Number.isInteger(rounds) && rounds >= 1 && Number.isInteger(batches) && batches >= 1)) {
  console.error('--rounds and --batches take whole numbers of at least 1');
  process.exit(2);
}
const BATCH = 20;

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Inside the package's node_modules, so the bundle finds the packages the batcher imports.
const cacheDir = path.join(serverDir, 'node_modules', '.cache');
fs.mkdirSync(cacheDir, { recursive: true });
const outDir = fs.mkdtempSync(path.join(cacheDir, 'reftrack-click-batch-'));
try {
  await build({ entry: { batcher: path.join(serverDir, 'src/db/click-batcher.ts') }, outDir, format: ['esm'], platform: 'node', target: 'node20', silent: true, config: false });
  const { ClickBatcher } = await import(pathToFileURL(path.join(outDir, 'batcher.js')).href);

  let written = 0;
  const batcher = new ClickBatcher({ maxInFlight: 3, write: async (rows) => void (written += rows.events.length), close: async () => {} });
  const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
  const DIMS = ['', 'desktop', 'Chrome', '', '', '', ''];
  let visitor = 0;
  /** One batch: 20 clicks submitted in one turn of the event loop, as the lane's clients come. */
  const batch = () => {
    const now = Date.now();
    const clicks = [];
    for (let i = 0; i < BATCH; i++) {
      const n = ++visitor;
      const clickId = `clk_${n.toString(36).padStart(24, '0')}`;
      const event = [1, 1, 1, clickId, false, 's1', 'https://acme.test/', null, null, null, null, null, null, UA, null, null, null, 'desktop', 'Linux', 'Chrome', now, now, false];
      const write = { customer: [clickId, 1, 1, 1, 'click', false, now, now], event, linkId: 1, partnerId: 1, programId: 1, at: now, bot: false, visitors: [{ clickId }, { address: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`, userAgent: UA }], dims: [...DIMS] };
      clicks.push(batcher.submit(write));
    }
    return Promise.all(clicks);
  };

  const perClick = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    for (let b = 0; b < batches; b++) await batch();
    perClick.push(((performance.now() - started) * 1000) / (batches * BATCH));
  }
  if (written !== rounds * batches * BATCH) throw new Error(`the writer was given ${written} clicks of ${rounds * batches * BATCH}`);
  // The first rounds run before V8 has optimized the batcher: left out of the median when there are more.
  const settled = rounds > 2 ? perClick.slice(2) : perClick;
  console.log(`click batch: ${rounds} round(s) of ${batches} batches of ${BATCH} clicks; µs per click: median ${medianBy(settled, (x) => x).toFixed(3)}, fastest ${Math.min(...settled).toFixed(3)}`);
} finally {
  fs.rmSync(outDir, { recursive: true, force: true });
}
