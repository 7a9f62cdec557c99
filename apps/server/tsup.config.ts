import { defineConfig } from 'tsup';

// Migrations stay outside the bundle (apps/server/migrations), loaded at run time.
export default defineConfig({
  // The SQLite click writer and checkpointer threads and the stats thread are entries of their own: a worker thread loads its file by name.
  entry: {
    main: 'src/main.ts',
    index: 'src/index.ts',
    'sqlite-click-writer.worker': 'src/db/sqlite-click-writer.worker.mjs',
    'sqlite-checkpointer.worker': 'src/db/sqlite-checkpointer.worker.mjs',
    'stats.worker': 'src/jobs/stats.worker.ts',
  },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  dts: false,
});
