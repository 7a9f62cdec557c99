import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const CLICK = '/api/v1/track/click';
const body = { affiliate_url: 'https://acme.test/?aff=pat20' };

describe(`[${dbKind}] 8 limits`, () => {
  it('rule 1: every response carries X-RateLimit-Limit, -Remaining and -Reset (unix seconds); no Retry-After below the limit', async () => {
    const res = await s.post(CLICK, body, { 'x-forwarded-for': '192.0.2.10' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('60');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('59');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('61 clicks from one address in a minute: the 61st is 429 with Retry-After and the typed body, and records nothing', async () => {
    const ip = '192.0.2.61';
    for (let i = 0; i < 60; i++) expect((await s.post(CLICK, body, { 'x-forwarded-for': ip })).status).toBe(200);
    const events = Number((await s.db('click_events').count({ n: '*' }).first())!.n);
    const customers = Number((await s.db('customers').count({ n: '*' }).first())!.n);
    const res = await s.post(CLICK, body, { 'x-forwarded-for': ip });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
    expect(res.body).toEqual({ error: { status: 429, code: 'rate_limited', message: expect.any(String), retry_after_seconds: retryAfter } });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(Number((await s.db('click_events').count({ n: '*' }).first())!.n)).toBe(events);
    expect(Number((await s.db('customers').count({ n: '*' }).first())!.n)).toBe(customers);
    // Another address is unaffected.
    expect((await s.post(CLICK, body, { 'x-forwarded-for': '192.0.2.62' })).status).toBe(200);
  });

  it('lead: 30 per minute per client IP', async () => {
    const ip = '192.0.2.30';
    for (let i = 0; i < 30; i++) expect((await s.post('/api/v1/track/lead', {}, { 'x-forwarded-for': ip })).status).toBe(400);
    expect((await s.post('/api/v1/track/lead', {}, { 'x-forwarded-for': ip })).status).toBe(429);
  });

  it('sale and refund share 120 per minute per API key; an invalid key does not spend a valid key’s budget', async () => {
    const ip = '192.0.2.120';
    for (let i = 0; i < 130; i++) await s.post('/api/v1/track/sale', {}, { ...bearer('aff_attacker_key_000000000000000000'), 'x-forwarded-for': ip });
    const valid = await s.post('/api/v1/track/refund', { transaction_id: 'none' }, { ...bearer(KEY1), 'x-forwarded-for': ip });
    expect(valid.status).toBe(404);
    expect(valid.headers.get('x-ratelimit-limit')).toBe('120');
    expect(valid.headers.get('x-ratelimit-remaining')).toBe('119');
    for (let i = 0; i < 59; i++) await s.post('/api/v1/track/sale', {}, bearer(KEY1));
    for (let i = 0; i < 60; i++) await s.post('/api/v1/track/refund', {}, bearer(KEY1));
    const refused = await s.post('/api/v1/track/sale', { additional_data: { test_mode: true } }, bearer(KEY1));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
  });

  it('readiness: 30 per minute per API key, whatever address each call comes from', async () => {
    for (let i = 0; i < 30; i++) expect((await s.get('/api/v1/programs/me/readiness', bearer(KEY1))).status).toBe(200);
    const res = await s.get('/api/v1/programs/me/readiness', bearer(KEY1));
    expect(res.status).toBe(429);
    expect(res.body.error.code).toBe('rate_limited');
  });
});

describe(`[${dbKind}] 8 limits: a per-key bucket is only for a key that verified (docs/security.md)`, () => {
  const junk = (i: number) => bearer(`aff_junk_${i}_${'x'.repeat(30)}`);

  it('a fresh junk Bearer token on each CLI login start does not open a fresh bucket: 60 per minute per address', async () => {
    const ip = '192.0.2.200';
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await s.post('/api/v1/cli/auth/start', {}, { ...junk(i), 'x-forwarded-for': ip })).status);
    expect(statuses.filter((st) => st === 200)).toHaveLength(60);
    expect(statuses.filter((st) => st === 429)).toHaveLength(140);
  });

  it('junk keys on sale and refund count against the sender’s address, not a bucket per token', async () => {
    const ip = '192.0.2.201';
    const statuses: number[] = [];
    for (let i = 0; i < 130; i++) statuses.push((await s.post('/api/v1/track/sale', {}, { ...junk(i), 'x-forwarded-for': ip })).status);
    expect(statuses.slice(0, 120).every((st) => st === 401)).toBe(true);
    expect(statuses.slice(120).every((st) => st === 429)).toBe(true);
  });

  it('junk keys on readiness and on the CLI program-key routes count per address too', async () => {
    for (const [path, points] of [['/api/v1/programs/me/readiness', 30], ['/api/v1/cli/status', 60]] as const) {
      const ip = `192.0.2.${path.length}`;
      for (let i = 0; i < points; i++) expect((await s.get(path, { ...junk(i), 'x-forwarded-for': ip })).status).toBe(401);
      expect((await s.get(path, { ...junk(points), 'x-forwarded-for': ip })).status).toBe(429);
    }
  });

  it('junk login tokens on the CLI account routes and junk agent keys count per address', async () => {
    for (const [path, points] of [['/api/v1/cli/programs', 60], ['/api/agent/v1/programs', 120]] as const) {
      const ip = `192.0.2.${path.length + 100}`;
      for (let i = 0; i < points; i++) expect((await s.get(path, { ...bearer(`rtl_junk${i}${'y'.repeat(40)}`), 'x-forwarded-for': ip })).status).toBe(401);
      expect((await s.get(path, { ...bearer(`rtl_junk_last${'y'.repeat(40)}`), 'x-forwarded-for': ip })).status).toBe(429);
    }
  });
});
