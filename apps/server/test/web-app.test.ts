/** The dashboard web app served at / (routes/web-app.ts): index for client routes, assets, no traversal. */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import Koa from 'koa';
import Router from '@koa/router';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestEnvelope } from '../src/http/request-envelope.js';
import { resolveWebDist, webApp, WEB_APP_PATHS } from '../src/routes/web-app.js';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';

const INDEX = '<!doctype html><title>app</title><script type="module" src="/assets/index-AbCd1234.js"></script>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;

function makeDist(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-web-dist-'));
  fs.mkdirSync(path.join(dir, 'dist/assets'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'dist/index.html'), INDEX);
  fs.writeFileSync(path.join(dir, 'dist/assets/index-AbCd1234.js'), SCRIPT);
  fs.writeFileSync(path.join(dir, 'dist/assets/style-AbCd1234.css'), 'body{color:red}');
  fs.writeFileSync(path.join(dir, 'dist/robots.txt'), 'User-agent: *');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'outside dist');
  return dir;
}

async function serve(distDir: string | null) {
  const app = new Koa();
  const router = new Router();
  router.get('/api/thing', (ctx) => (ctx.body = { ok: true }));
  router.get(WEB_APP_PATHS, webApp({ distDir }));
  app.use(requestEnvelope({ logger: pino({ level: 'silent' }), publicBaseUrl: 'http://127.0.0.1', now: Date.now }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  /** Raw request: the path goes out exactly as written (fetch would normalise `..`). */
  const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: p, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  return { get, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('web app route (built files)', () => {
  let dir: string;
  let s: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    dir = makeDist();
    s = await serve(path.join(dir, 'dist'));
  });
  afterAll(async () => {
    await s.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers index.html for / and for client-side routes, never cached for long', async () => {
    for (const p of ['/', '/programs', '/programs/3/events?type=click', '/index.html', '/sign-in']) {
      const res = await s.get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body.toString()).toBe(INDEX);
    }
  });

  it('serves hashed assets with their content type and a year-long immutable cache', async () => {
    const js = await s.get('/assets/index-AbCd1234.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body.toString()).toBe(SCRIPT);
    const css = await s.get('/assets/style-AbCd1234.css');
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const txt = await s.get('/robots.txt');
    expect(txt.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(txt.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('compresses for clients that accept gzip', async () => {
    const res = await s.get('/assets/index-AbCd1234.js', { 'accept-encoding': 'gzip, br' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers.vary).toContain('Accept-Encoding');
    expect(gunzipSync(res.body).toString()).toBe(SCRIPT);
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await s.get('/programs', {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(res.body.length).toBe(0);
  });

  it('answers a missing asset with the 404 envelope, not the page', async () => {
    const res = await s.get('/assets/index-missing.js');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString())).toEqual({ data: null, error: { status: 404, name: 'NotFoundError', message: 'Not found', details: {} } });
  });

  it('never reads outside dist/', async () => {
    for (const p of [
      '/../secret.txt',
      '/assets/../../secret.txt',
      '/%2e%2e/secret.txt',
      '/assets/%2e%2e%2f%2e%2e%2fsecret.txt',
      '/..%5csecret.txt',
      '/assets/%00.js',
      '/.hidden.txt',
      '/%E0%A4%A.js',
    ]) {
      const res = await s.get(p);
      expect(res.status, p).toBe(404);
      expect(res.body.toString(), p).not.toContain('outside dist');
    }
  });

  it('leaves API and server paths alone', async () => {
    expect(JSON.parse((await s.get('/api/thing')).body.toString())).toEqual({ ok: true });
    for (const p of ['/api/nothing', '/dev-idp/sign-in', '/cli/login', '/docs/errors', '/tracker.js', '/healthz']) {
      const res = await s.get(p);
      expect(res.status, p).toBe(404);
      expect(res.headers['content-type'], p).toContain('application/json');
    }
  });
});

describe('web app route without a build', () => {
  it('answers the 404 envelope', async () => {
    const s = await serve(null);
    try {
      const res = await s.get('/programs');
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString()).error.message).toBe('Not found');
    } finally {
      await s.close();
    }
  });
});

describe(`[${dbKind}] web app in the real server`, () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t?.close());

  it('resolves @reftrack/web from the server package', () => {
    expect(resolveWebDist()).toMatch(/[\\/]apps[\\/]web[\\/]dist$|[\\/]@reftrack[\\/]web[\\/]dist$/);
  });

  it('serves the dashboard at / once it is built, and keeps API answers unchanged', async () => {
    const built = fs.existsSync(path.join(resolveWebDist()!, 'index.html'));
    const page = await t.get('/programs/1/events');
    if (built) {
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<div id="app">');
    } else {
      expect(page.status).toBe(404);
    }
    const api = await t.get('/api/nothing');
    expect(api.status).toBe(404);
    expect(api.body.error.message).toBe('Not found');
    const post = await t.post('/api/nothing', {});
    expect(post.status).toBe(404);
    expect((await t.get('/healthz')).status).toBe(200);
    expect((await t.get('/docs/errors')).headers.get('content-type')).toContain('text/html');
  });
});
