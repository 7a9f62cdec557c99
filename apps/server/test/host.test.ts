/**
 * DNS rebinding (docs/security.md): a page on a domain that resolves to the server's address makes
 * the browser send that domain as `Host` and as `Origin`. Requests whose Host is not configured
 * are refused before any route runs — the click lane included — and the cross-site check of
 * dashboard writes compares `Origin` with the configured origin, never with the request's Host.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, freshIp, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request with a Host header of our choosing (fetch would not send one). */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, headers: { 'x-forwarded-for': freshIp(), ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const REFUSED = {
  data: null,
  error: { status: 421, name: 'MisdirectedRequestError', message: 'This server does not answer for that Host. Use its public address (PUBLIC_BASE_URL), or have the operator add the name to ALLOWED_HOSTS.', details: {} },
};

const count = async (s: TestServer, table: string): Promise<number> => Number((await s.db(table).count({ n: '*' }).first())!.n);

describe(`[${dbKind}] Host allow-list: local set-up (loopback, no PUBLIC_BASE_URL)`, () => {
  let s: TestServer;
  let port: string;
  beforeAll(async () => {
    s = await startTestServer({ fixture: accountsFixture() });
    port = new URL(s.url).port;
  });
  afterAll(() => s?.close());

  it('a rebound domain cannot drive the dashboard: a forged Host with a matching Origin is refused before the route runs', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const before = await s.db('program_keys').where({ program_id: 1 }).first('key_hash');
    const rebound = `rebind.evil.example:${port}`;
    const res = await send(s.url, 'POST', '/api/dashboard/programs/1/key', { ...cookie, host: rebound, origin: `http://${rebound}` }, '{}');
    expect(res.status).toBe(421);
    expect(JSON.parse(res.body)).toEqual(REFUSED);
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(await s.db('program_keys').where({ program_id: 1 }).first('key_hash')).toEqual(before);
  });

  it('the click lane, the tracking routes and the pages refuse a foreign Host too, recording nothing', async () => {
    const clicks = await count(s, 'click_events');
    const lane = await send(s.url, 'POST', '/api/v1/track/click', { host: `evil.example:${port}` }, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }));
    expect(lane.status).toBe(421);
    expect(JSON.parse(lane.body)).toEqual(REFUSED);
    expect(await count(s, 'click_events')).toBe(clicks);
    for (const [method, path] of [['GET', '/dev-idp/sign-in'], ['GET', '/'], ['GET', '/api/dashboard/session'], ['POST', '/api/v1/track/lead'], ['GET', '/docs/errors']] as const) {
      const res = await send(s.url, method, path, { host: 'evil.example' }, method === 'POST' ? '{}' : undefined);
      expect(res.status, path).toBe(421);
    }
  });

  it('a request without a usable Host is refused', async () => {
    for (const host of ['evil.example:80:80', 'user@127.0.0.1', '127.0.0.1.evil.example']) {
      const res = await send(s.url, 'GET', '/api/dashboard/session', { host });
      expect(res.status, JSON.stringify(host)).toBe(421);
    }
    // HTTP/1.0 lets a client leave Host out altogether.
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.end('GET /api/dashboard/session HTTP/1.0\r\n\r\n'));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 421 /);
  });

  it('the loopback names are served, in any letter case and with any port', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', `LocalHost:${port}`]) {
      const res = await send(s.url, 'POST', '/api/v1/track/click', { host }, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }));
      expect(res.status, host).toBe(200);
    }
  });

  it('GET /healthz answers whatever the Host: balancers probe by address', async () => {
    const res = await send(s.url, 'GET', '/healthz', { host: '10.0.0.7:8787' });
    expect(res.status).toBe(200);
  });

  it('the cross-site check takes the server’s own origins (loopback, this port), not the request’s Host', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const patch = (origin: string, host = `127.0.0.1:${port}`) =>
      send(s.url, 'PATCH', '/api/dashboard/programs/1', { ...cookie, host, origin }, JSON.stringify({ name: 'Acme' }));
    expect((await patch(`http://127.0.0.1:${port}`)).status).toBe(200);
    expect((await patch(`http://localhost:${port}`, `localhost:${port}`)).status).toBe(200);
    // Another local site on another port is "same-site" for the browser, so it carries the cookie.
    const otherPort = await patch(`http://127.0.0.1:${Number(port) + 1}`);
    expect(otherPort.status).toBe(403);
    expect(JSON.parse(otherPort.body).error.message).toBe('Cross-site request refused');
  });
});

describe(`[${dbKind}] Host allow-list: PUBLIC_BASE_URL and ALLOWED_HOSTS`, () => {
  let s: TestServer;
  let port: string;
  beforeAll(async () => {
    s = await startTestServer({
      fixture: accountsFixture(),
      env: { PUBLIC_BASE_URL: 'https://track.acme.test', ALLOWED_HOSTS: 'alias.acme.test, 127.0.0.1', ALLOW_DEV_SIGN_IN: 'true' },
    });
    port = new URL(s.url).port;
  });
  afterAll(() => s?.close());

  it('serves the public host and each listed name; other names, loopback ones included, are refused', async () => {
    const click = (host: string) => send(s.url, 'POST', '/api/v1/track/click', { host }, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }));
    expect((await click('track.acme.test')).status).toBe(200);
    expect((await click('alias.acme.test:443')).status).toBe(200);
    expect((await click(`localhost:${port}`)).status).toBe(421);
    expect((await click('acme.test')).status).toBe(421);
  });

  it('an allowed extra host name is still not an allowed origin for dashboard writes: only PUBLIC_BASE_URL’s origin is', async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const patch = (origin: string) => send(s.url, 'PATCH', '/api/dashboard/programs/1', { ...cookie, host: 'alias.acme.test', origin }, JSON.stringify({ name: 'Acme' }));
    // `http://alias…` is exactly the request's own scheme and Host: matching it would be no check at all.
    expect((await patch('http://alias.acme.test')).status).toBe(403);
    expect((await patch('https://alias.acme.test')).status).toBe(403);
    expect((await patch('https://track.acme.test')).status).toBe(200);
  });
});
