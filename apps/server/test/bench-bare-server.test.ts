/**
 * The benchmark's bare server (bench/bare-server.mjs) as answer-cost.mjs uses it: told an answer
 * in BARE_ANSWER, it gives exactly those headers in that order, a new request id per answer, that
 * body, and parses the request body when asked. A variant that gave less than it was told would
 * make the click's answer look cheaper than it is.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startBareServer } from '../bench/processes.mjs';

const servers: Array<{ stop: () => Promise<void> }> = [];

async function startBare(env: Record<string, string>): Promise<string> {
  const bare = await startBareServer(env);
  servers.push(bare);
  return bare.url;
}

function post(url: string, body: string): Promise<{ status: number; rawHeaders: string[]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/api/v1/track/click`, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const names = (rawHeaders: string[]) => rawHeaders.filter((_, i) => i % 2 === 0);
const header = (rawHeaders: string[], name: string) => rawHeaders[rawHeaders.indexOf(name) + 1];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe('bench bare server', () => {
  it('answers the plain click JSON without BARE_ANSWER', async () => {
    const url = await startBare({});
    const res = await post(url, '{"affiliate_url":"x"}');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ success: true });
  });

  it('gives the headers it is told, in order, with a new request id per answer, and the body', async () => {
    const answer = {
      headers: [
        ['X-Request-ID', 'fixed'],
        ['X-RateLimit-Limit', '60'],
        ['Content-Type', 'application/json; charset=utf-8'],
        ['Content-Length', '16'],
      ],
      body: '{"success":true}',
      requestIdHeader: 'X-Request-ID',
      parse: true,
    };
    const url = await startBare({ BARE_ANSWER: JSON.stringify(answer) });
    const first = await post(url, '{"affiliate_url":"x"}');
    const second = await post(url, '{"affiliate_url":"x"}');
    expect(first.status).toBe(200);
    expect(names(first.rawHeaders).slice(0, 4)).toEqual(['X-Request-ID', 'X-RateLimit-Limit', 'Content-Type', 'Content-Length']);
    expect(header(first.rawHeaders, 'X-Request-ID')).toMatch(/^[0-9a-f-]{36}$/);
    expect(header(second.rawHeaders, 'X-Request-ID')).not.toBe(header(first.rawHeaders, 'X-Request-ID'));
    expect(header(first.rawHeaders, 'X-RateLimit-Limit')).toBe('60');
    expect(first.body).toBe('{"success":true}');
  });

  it('parses the request body when told to, and refuses one that is not JSON', async () => {
    const answer = { headers: [['Content-Length', '2']], body: '{}', parse: true };
    const url = await startBare({ BARE_ANSWER: JSON.stringify(answer) });
    expect((await post(url, 'not json')).status).toBe(400);
    expect((await post(url, '{}')).status).toBe(200);
  });
});
