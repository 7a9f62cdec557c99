import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { reftrack: 'src/main.ts' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  // One file: `reftrack --help` reads a single module and resolves nothing in node_modules.
  // The contract (data) and commander are bundled in; conf and open stay external and are
  // imported only by the commands that need them, so they cost nothing at startup.
  splitting: false,
  noExternal: ['@reftrack/contract', 'commander'],
  external: ['conf', 'open'],
  banner: {
    // commander is CommonJS and requires Node built-ins; an ESM bundle has no `require` of its own.
    js: "#!/usr/bin/env node\nimport { createRequire as __reftrackCreateRequire } from 'node:module';\nconst require = __reftrackCreateRequire(import.meta.url);",
  },
  sourcemap: false,
  clean: true,
  dts: false,
});
