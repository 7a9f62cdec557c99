/**
 * GET / and the dashboard's client-side routes — the web app of `@reftrack/web`, served from its
 * built `dist/` directory: `index.html` for every path that is not an API, asset or server page,
 * hashed files under `/assets/` with a year-long immutable cache, everything else by its content
 * type. Paths never leave the `dist/` directory. Without a build, the answer is the 404 envelope.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context, Next } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';

/** Paths the server answers itself; the web app never shadows them. */
export const SERVER_PATHS = /^\/(api(\/|$)|dev-idp(\/|$)|cli(\/|$)|docs(\/|$)|tracker(\/|\.|$)|healthz$|readyz$|metrics$)/;
/** Every other path: the router route of the web app (registered last, GET and HEAD only). */
export const WEB_APP_PATHS = /^\/(?!(api|dev-idp|dev|cli|docs|auth|signed-out)(\/|$)|tracker(\/|\.|$)|healthz$|readyz$|metrics$)/;
/**
 * The dashboard's own client-side routes (apps/web/src/app.tsx), which get its page; any other path
 * that is not a file of the build is a 404 in the JSON envelope, not the dashboard's HTML.
 */
export const DASHBOARD_PAGES = /^\/(|index\.html|sign-in|programs|access|audit-log|webhooks|programs\/[^/]+(\/[^/]+)?|portal|portal\/(sign-in|verify|invitation)|portal\/partners\/[0-9]+|apply\/[A-Za-z0-9_-]{16})\/?$/;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.mjs': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.map', '.svg', '.txt', '.webmanifest']);

/**
 * The app loads only its own files and talks only to its own origin; its security headers come
 * from http/page-headers.ts (no framing: the key page has a destructive button).
 */
export const WEB_APP_POLICY = { scripts: ["'self'"], styles: ["'self'"] };

/** `dist/` of the installed `@reftrack/web`, or null when the package cannot be found. */
export function resolveWebDist(): string | null {
  try {
    return path.join(path.dirname(createRequire(import.meta.url).resolve('@reftrack/web/package.json')), 'dist');
  } catch {
    return null;
  }
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  body: Buffer;
  gzip: Buffer | null;
}

export function webApp(options: { distDir?: string | null } = {}) {
  const distDir = options.distDir === undefined ? resolveWebDist() : options.distDir;
  const root = distDir ? path.resolve(distDir) : null;
  const cache = new Map<string, CachedFile>();

  /** Reads a regular file below root (cached by mtime, with its gzip form), or null. */
  async function load(file: string): Promise<CachedFile | null> {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      return null;
    }
    if (!stat.isFile()) return null;
    const hit = cache.get(file);
    if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit;
    const body = await fs.promises.readFile(file);
    const ext = path.extname(file).toLowerCase();
    const gzip = COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body, { level: 9 }) : null;
    const entry = { mtimeMs: stat.mtimeMs, size: stat.size, body, gzip };
    cache.set(file, entry);
    return entry;
  }

  function send(ctx: Context, file: string, entry: CachedFile, cacheControl: string): void {
    const ext = path.extname(file).toLowerCase();
    ctx.status = 200;
    ctx.type = CONTENT_TYPES[ext] ?? 'application/octet-stream';
    ctx.set('Cache-Control', cacheControl);
    ctx.vary('Accept-Encoding');
    if (entry.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = entry.gzip;
    } else {
      ctx.body = entry.body;
    }
  }

  return async function serveWebApp(ctx: Context, next: Next): Promise<void> {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || SERVER_PATHS.test(ctx.path)) return next();
    if (!root) throw new ApiError(ERRORS.routeNotFound);

    let decoded: string;
    try {
      decoded = decodeURIComponent(ctx.path);
    } catch {
      throw new ApiError(ERRORS.routeNotFound);
    }
    // No NUL bytes, backslashes, dot-segments or hidden files: nothing outside dist/ is reachable.
    const segments = decoded.split('/');
    if (decoded.includes('\0') || decoded.includes('\\') || segments.some((s) => s === '..' || s.startsWith('.'))) throw new ApiError(ERRORS.routeNotFound);
    const target = path.resolve(root, `.${path.posix.normalize(decoded)}`);
    if (target !== root && !target.startsWith(root + path.sep)) throw new ApiError(ERRORS.routeNotFound);

    const last = segments[segments.length - 1];
    const isFileRequest = last.includes('.') && decoded !== '/index.html';
    if (isFileRequest) {
      const entry = await load(target);
      if (!entry) throw new ApiError(ERRORS.routeNotFound);
      const hashed = decoded.startsWith('/assets/');
      send(ctx, target, entry, hashed ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      return;
    }

    // `/`, `/index.html` and client-side routes such as `/programs/1/events` get the app's page.
    if (!DASHBOARD_PAGES.test(decoded)) throw new ApiError(ERRORS.routeNotFound);
    const indexFile = path.join(root, 'index.html');
    const index = await load(indexFile);
    if (!index) throw new ApiError(ERRORS.routeNotFound);
    send(ctx, indexFile, index, 'no-cache');
  };
}
