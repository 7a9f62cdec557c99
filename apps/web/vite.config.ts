import { defineConfig } from 'vite';

// Preact through esbuild's automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    assetsDir: 'assets',
    sourcemap: false,
    // One small app: a single JS and a single CSS file keep the first load to two requests.
    cssCodeSplit: false,
  },
  server: {
    // `pnpm --filter @reftrack/web dev` proxies the API to a server on the default port.
    proxy: Object.fromEntries(['/api', '/dev-idp', '/cli', '/docs', '/tracker', '/healthz'].map((p) => [p, 'http://127.0.0.1:8787'])),
  },
});
