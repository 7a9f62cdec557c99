import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

// The two builds below run in parallel, so neither may clean `dist` itself: one would delete the other's output.
rmSync('dist', { recursive: true, force: true });

// The contract's dist is one module whose error catalogue is built by function calls, which a
// bundler cannot drop. Its sources are one module per concern and the package declares
// `sideEffects: false`, so bundling from them keeps only the brand constants the tracker uses.
const contractSource = fileURLToPath(new URL('../contract/src/index.ts', import.meta.url));
const alias = { '@reftrack/contract': contractSource };

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    // ESM for bundlers; CommonJS too, for tools that still require() (the package exports both).
    format: ['esm', 'cjs'],
    target: 'es2020',
    dts: true,
    noExternal: ['@reftrack/contract'],
    esbuildOptions(o) {
      o.alias = alias;
    },
  },
  {
    entry: { tracker: 'src/iife.ts' },
    format: ['iife'],
    target: 'es2020',
    outExtension: () => ({ js: '.iife.js' }),
    noExternal: ['@reftrack/contract'],
    esbuildOptions(o) {
      o.alias = alias;
      // tsconfig's `strict` implies alwaysStrict, which would prepend "use strict": bytes the
      // script does not need. esbuild takes a tsconfig path or a raw one, not both.
      delete o.tsconfig;
      o.tsconfigRaw = { compilerOptions: { alwaysStrict: false } };
    },
    minify: 'terser',
    terserOptions: {
      ecma: 2020,
      // hoist_props turns the used BRAND fields into plain constants and drops the rest.
      compress: { passes: 3, hoist_props: true, pure_getters: true, unsafe: true },
      format: { comments: false },
    },
  },
]);
