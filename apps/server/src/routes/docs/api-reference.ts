/**
 * GET /openapi.json — the OpenAPI 3.1 document built from the contract (@reftrack/contract
 * openapi.ts) — and GET /docs/api, its reference page rendered by Swagger UI (swagger-ui-dist,
 * Apache-2.0), served from this server: no CDN, so the page works offline and under a content
 * security policy of `'self'` only. The page's start-up script is a file too (no inline script).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Context } from 'koa';
import { buildOpenApiDocument, ERRORS } from '@reftrack/contract';
import { ApiError } from '../../api-error.js';

export const API_REFERENCE_PATH = '/docs/api';

/** The renderer's files the page loads, and their content types; nothing else is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/** Starts Swagger UI on the served document; `validatorUrl: null` keeps it from calling swagger.io. */
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null, tryItOutEnabled: false });
});
`;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Reftrack API reference</title>
<link rel="icon" type="image/png" href="${API_REFERENCE_PATH}/favicon-32x32.png">
<link rel="stylesheet" href="${API_REFERENCE_PATH}/swagger-ui.css">
</head><body><main id="reference"></main>
<script src="${API_REFERENCE_PATH}/swagger-ui-bundle.js"></script>
<script src="${API_REFERENCE_PATH}/init.js"></script>
</body></html>`;

/** Scripts and styles from this server only; the renderer fetches /openapi.json (connect-src 'self'). */
export const API_REFERENCE_POLICY = { scripts: ["'self'"], styles: ["'self'"], images: ["'self'", 'data:'] };

const assetDir = (): string => path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export function openApiDocument(publicBaseUrl: string) {
  // Built once: the document depends only on the contract and the public address.
  const body = JSON.stringify(buildOpenApiDocument(publicBaseUrl));
  return (ctx: Context): void => {
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = body;
  };
}

export function apiReferencePage(ctx: Context): void {
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = PAGE;
}

export function apiReferenceAsset() {
  const dir = assetDir();
  const cache = new Map<string, Buffer>();
  return async (ctx: Context): Promise<void> => {
    const file = String(ctx.params.file ?? '');
    if (file === 'init.js') {
      ctx.type = 'application/javascript; charset=utf-8';
      ctx.body = INIT_SCRIPT;
      return;
    }
    const type = ASSETS[file];
    if (!type) throw new ApiError(ERRORS.routeNotFound);
    let body = cache.get(file);
    if (!body) {
      body = await fs.promises.readFile(path.join(dir, file));
      cache.set(file, body);
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = body;
  };
}
