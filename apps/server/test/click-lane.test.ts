/**
 * The click route's fast lane (src/routes/track/click-lane.ts) answers a real click without Koa and
 * hands every other request to Koa. Koa still answers the route when the URL carries a query
 * string, so each answer of the lane is compared here with Koa's answer to the same request.
 */
import http from 'node:http';
import net from 'node:net';
import { Writable } from 'node:stream';
import Koa from 'koa';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { clientIp } from '../src/http/client-ip.js';
import { dbKind, freshIp, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { createTestDatabase } from './helpers/databases.js';
import { loadFixture } from '../src/seed/fixture.js';
import { baseFixture } from './helpers/fixture.js';

const LANE = '/api/v1/track/click';
const VIA_KOA = '/api/v1/track/click?via=koa';

interface RawAnswer {
  status: number;
  /** Header names in the order they were sent, lower-cased. */
  names: string[];
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** A POST over a plain socket, so the header order of the answer can be read. */
function rawPost(url: string, path: string, body: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        const names = res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
        resolve({ status: res.statusCode ?? 0, names, headers: res.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An answer without what differs between any two requests: ids, times, the remaining budget. */
function comparable(a: RawAnswer): unknown {
  const headers = { ...a.headers };
  for (const h of ['x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'date']) delete headers[h];
  const body = JSON.parse(JSON.stringify(a.body ?? null).replace(/"(clk|rt)_[0-9A-Za-z]+"/g, '"ID"').replace(/"[0-9a-f]{8}-[0-9a-f-]{27}"/g, '"REQUEST_ID"').replace(/"eventId":\d+/g, '"eventId":0'));
  return { status: a.status, names: a.names, headers, body };
}

/**
 * A request written over a raw socket in pieces, 30 ms apart, so that the body arrives after its
 * headers; answers the whole response text, or '' when `hangUp` closes the socket after the pieces.
 */
async function rawExchange(url: string, pieces: string[], options: { hangUp?: boolean } = {}): Promise<string> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.setEncoding('utf8').on('data', (d: string) => (text += d));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  for (const piece of pieces) {
    socket.write(piece);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  if (options.hangUp) socket.destroy();
  await ended;
  return text;
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const both = async (body: string, headers: Record<string, string> = {}): Promise<[RawAnswer, RawAnswer]> => [
  await rawPost(s.url, LANE, body, { 'x-forwarded-for': freshIp(), ...headers }),
  await rawPost(s.url, VIA_KOA, body, { 'x-forwarded-for': freshIp(), ...headers }),
];

describe(`[${dbKind}] 4.1 the click lane answers as Koa does`, () => {
  it('answers a real click with the same status, headers in the same order, and body', async () => {
    const [lane, koa] = await both(JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }));
    expect(lane.status).toBe(200);
    expect(comparable(lane)).toEqual(comparable(koa));
    expect(lane.names.slice(0, 8)).toEqual(['x-request-id', 'access-control-allow-origin', 'access-control-expose-headers', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'content-type', 'content-length']);
    expect(lane.headers['x-ratelimit-remaining']).toBe(koa.headers['x-ratelimit-remaining']);
  });

  it('records the click it answers, with its counters, like any other', async () => {
    const before = await s.db('referral_links').where({ short_link: 'sam10' }).first();
    const lane = await rawPost(s.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=sam10', session_id: 'lane-1' }), { 'x-forwarded-for': freshIp() });
    const clickId = (lane.body as { click_id: string }).click_id;
    expect(await s.db('click_events').where({ click_id: clickId, session_id: 'lane-1' }).first()).toBeTruthy();
    expect(await s.db('customers').where({ click_id: clickId }).first()).toBeTruthy();
    const after = await s.db('referral_links').where({ short_link: 'sam10' }).first();
    expect(Number(after.clicks)).toBe(Number(before.clicks) + 1);
  });

  it("keeps a caller's safe X-Request-ID and answers a new one otherwise (7.2)", async () => {
    const kept = await rawPost(s.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }), { 'x-forwarded-for': freshIp(), 'x-request-id': 'trace-12345678' });
    expect(kept.headers['x-request-id']).toBe('trace-12345678');
    const replaced = await rawPost(s.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }), { 'x-forwarded-for': freshIp(), 'x-request-id': 'bad id' });
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  const handedOff: Array<[string, string]> = [
    ['malformed JSON', '{"affiliate_url": '],
    ['a JSON array', '[1, 2]'],
    ['a NUL escape', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20', page_title: 'a\u0000b' })],
    ['an empty body', ''],
    ['no affiliate_url', JSON.stringify({ page_url: 'https://acme.test/' })],
    ['an affiliate_url that is not a URL', JSON.stringify({ affiliate_url: 'not a url' })],
    ['an affiliate_url without aff', JSON.stringify({ affiliate_url: 'https://acme.test/?ref=x' })],
    ['an unknown link', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=nosuchlink' })],
    ['a link without a partner', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=nopartner' })],
    ['a disabled link (410 typed body)', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=off' })],
    ['a test click', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20', additional_data: { test_mode: true } })],
  ];
  it.each(handedOff)('hands %s to Koa, which answers it exactly as without the lane', async (_name, body) => {
    const [lane, koa] = await both(body);
    expect(comparable(lane)).toEqual(comparable(koa));
  });

  it('hands a click with a program key to Koa (test mode checks the key: rule 3)', async () => {
    const body = JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20', additional_data: { test_mode: true, program_id: 2 } });
    const [lane, koa] = await both(body, { authorization: `Bearer ${KEY1}` });
    expect(lane.status).toBe(403);
    expect(comparable(lane)).toEqual(comparable(koa));
  });

  it('hands a click that failed to record to Koa as a failure: one 500, and the click is not tried again', async () => {
    let calls = 0;
    s.faults.beforeClickSubmit = () => {
      calls += 1;
      if (calls === 1) throw new Error('injected click failure');
    };
    try {
      const before = await s.db('click_events').count({ n: '*' }).first();
      const answer = await rawPost(s.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }), { 'x-forwarded-for': freshIp() });
      expect(answer.status).toBe(500);
      expect(answer.body).toEqual({ data: null, error: { status: 500, name: 'InternalServerError', message: 'Click tracking failed', details: {} } });
      expect(calls).toBe(1);
      const after = await s.db('click_events').count({ n: '*' }).first();
      expect(Number(after?.n)).toBe(Number(before?.n));
    } finally {
      delete s.faults.beforeClickSubmit;
    }
  });

  it('spends one rate-limit point per request, whether it answers or hands over (part 8)', async () => {
    const ip = freshIp();
    const remaining: string[] = [];
    for (const body of ['{"affiliate_url": ', JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }), JSON.stringify({ affiliate_url: 'https://acme.test/?aff=off' })]) {
      const answer = await rawPost(s.url, LANE, body, { 'x-forwarded-for': ip });
      remaining.push(String(answer.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(['59', '58', '57']);
  });

  it('reads a body that comes after its headers, in pieces, as one body', async () => {
    const body = JSON.stringify({ affiliate_url: 'https://acme.test/?aff=sam10', session_id: 'lane-split' });
    const head = `POST ${LANE} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Forwarded-For: ${freshIp()}\r\nConnection: close\r\n\r\n`;
    const answer = await rawExchange(s.url, [head, body.slice(0, 10), body.slice(10)]);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    const clickId = /"click_id":"([^"]+)"/.exec(answer)?.[1];
    expect(await s.db('click_events').where({ click_id: clickId, session_id: 'lane-split' }).first()).toBeTruthy();
  });

  it('records nothing for a client that goes away before its body is whole, and answers the next click', async () => {
    const body = JSON.stringify({ affiliate_url: 'https://acme.test/?aff=sam10', session_id: 'lane-gone' });
    const head = `POST ${LANE} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Forwarded-For: ${freshIp()}\r\n\r\n`;
    await rawExchange(s.url, [head, body.slice(0, 10)], { hangUp: true });
    const next = await rawPost(s.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=sam10' }), { 'x-forwarded-for': freshIp() });
    expect(next.status).toBe(200);
    expect(await s.db('click_events').where({ session_id: 'lane-gone' }).first()).toBeUndefined();
  });

  it('hands the 61st click of a minute to Koa, which refuses it with 429, Retry-After and the typed body (7.7)', async () => {
    const ip = freshIp();
    const body = JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' });
    for (let i = 0; i < 60; i++) expect((await rawPost(s.url, LANE, body, { 'x-forwarded-for': ip })).status).toBe(200);
    const refused = await rawPost(s.url, LANE, body, { 'x-forwarded-for': ip });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited' } });
  });
});

describe(`[${dbKind}] the click lane's access log`, () => {
  it('writes one request line per click it answers, as Koa does for the others', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const database = await createTestDatabase();
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: database.url, TRUST_PROXY: '1', LOG_LEVEL: 'info' });
    const running = await startServer(config, { logger: pino({ level: 'info' }, sink) });
    try {
      await loadFixture(running.deps.db, baseFixture());
      const ok = await rawPost(running.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }), { 'x-forwarded-for': freshIp() });
      const refused = await rawPost(running.url, LANE, JSON.stringify({ affiliate_url: 'https://acme.test/?aff=off' }), { 'x-forwarded-for': freshIp() });
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests).toEqual([
        expect.objectContaining({ requestId: ok.headers['x-request-id'], method: 'POST', path: LANE, status: 200, ms: expect.any(Number) }),
        expect.objectContaining({ requestId: refused.headers['x-request-id'], method: 'POST', path: LANE, status: 410, ms: expect.any(Number) }),
      ]);
    } finally {
      await running.close();
      await database.drop();
    }
  });
});

describe('the click lane reads the client address as Koa does (ctx.ip)', () => {
  const cases: Array<[string, string | undefined, false | number]> = [
    ['no proxy trusted', '203.0.113.7', false],
    ['one hop, one address', '203.0.113.7', 1],
    ['one hop, a chain', '198.51.100.1, 203.0.113.7', 1],
    ['two hops, a chain', '198.51.100.1, 203.0.113.7, 192.0.2.9', 2],
    ['all hops (0)', '198.51.100.1 , 203.0.113.7', 0],
    ['an empty last entry', '203.0.113.7, ', 1],
    ['no header', undefined, 1],
  ];
  it.each(cases)('%s', async (_name, forwarded, trustProxy) => {
    const app = new Koa();
    if (trustProxy !== false) {
      app.proxy = true;
      app.maxIpsCount = trustProxy;
    }
    const server = http.createServer((req, res) => {
      const ctx = app.createContext(req, res);
      res.end(JSON.stringify({ koa: ctx.ip, lane: clientIp(req, trustProxy) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const res = await fetch(`http://127.0.0.1:${port}/`, { headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } });
      const { koa, lane } = (await res.json()) as { koa: string; lane: string };
      expect(lane).toBe(koa);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
