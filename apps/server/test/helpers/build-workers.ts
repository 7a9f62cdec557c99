/**
 * Vitest global setup: the tests run the server from its TypeScript sources, but a worker thread
 * loads a JavaScript file. The stats thread's entry (src/jobs/stats.worker.ts) is bundled here with
 * tsup, as `pnpm build` bundles it into dist, and the server finds it through REFTRACK_STATS_WORKER
 * (jobs/stats-thread.ts, set in vitest.config.ts).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const STATS_WORKER_DIR = path.join(root, 'test', '.workers');

export default async function setup(): Promise<void> {
  await build({
    entry: { 'stats.worker': path.join(root, 'src/jobs/stats.worker.ts') },
    outDir: STATS_WORKER_DIR,
    format: ['esm'],
    platform: 'node',
    target: 'node20',
    clean: true,
    silent: true,
    // tsup.config.ts of the package would otherwise be read and its entries built too.
    config: false,
  });
}
