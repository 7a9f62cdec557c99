import { defineConfig } from 'tsup';

// Migrations stay outside the bundle (apps/server/migrations), loaded at run time.
export default defineConfig({
  entry: { main: 'src/main.ts', index: 'src/index.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  dts: false,
});
