/** GET /tracker.js and /tracker/v1.js — the browser tracker bundle of @reftrack/tracker. */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';

let bundle: string | null | undefined;

function loadBundle(): string | null {
  if (bundle !== undefined) return bundle;
  try {
    const file = createRequire(import.meta.url).resolve('@reftrack/tracker/tracker.iife.js');
    bundle = fs.readFileSync(file, 'utf8');
  } catch {
    bundle = null;
  }
  return bundle;
}

export function trackerScript(versioned: boolean) {
  return async function serveTracker(ctx: Context): Promise<void> {
    const source = loadBundle();
    if (source === null) throw new ApiError(ERRORS.routeNotFound);
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Access-Control-Allow-Origin', '*');
    // The versioned path never changes content within a major version; the bare path may.
    ctx.set('Cache-Control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    ctx.body = source;
  };
}
