import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, LEGACY_KEY, startTestServer, type TestServer } from './helpers/index.js';
import { markKeyForRotation, regenerateProgramKey } from '../src/ops/program-keys.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const SALE = '/api/v1/track/sale';
const READINESS = '/api/v1/programs/me/readiness';
const unauthorized = (message: string) => ({ data: null, error: { status: 401, name: 'UnauthorizedError', message, details: {}, code: 'unauthorized' } });
const testSale = { additional_data: { test_mode: true } };

describe(`[${dbKind}] 5.3 header parsing (sale)`, () => {
  it('401 when the header is missing', async () => {
    const res = await s.post(SALE, testSale);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthorized('Missing or malformed Authorization header. Expected: Bearer <token>'));
  });
  it('401 when the header does not start with "Bearer "', async () => {
    const res = await s.post(SALE, testSale, { authorization: `Basic ${KEY1}` });
    expect(res.body).toEqual(unauthorized('Missing or malformed Authorization header. Expected: Bearer <token>'));
  });
  it('401 Missing API token when the token is empty after trimming', async () => {
    const res = await s.post(SALE, testSale, { authorization: 'Bearer   ' });
    expect(res.body).toEqual(unauthorized('Missing API token'));
  });
  it('401 Invalid API token for a wrong key', async () => {
    const res = await s.post(SALE, testSale, bearer('aff_notARealKey0000000000000000000000'));
    expect(res.body).toEqual(unauthorized('Invalid API token'));
  });
  it('the header is checked before the body', async () => {
    const res = await s.post(SALE, '{broken', { authorization: 'Bearer ' });
    expect(res.body).toEqual(unauthorized('Missing API token'));
  });
});

describe(`[${dbKind}] 5.1 program key`, () => {
  it('a key issued before the prefix existed keeps working (exact match on the whole value)', async () => {
    const res = await s.post(SALE, testSale, bearer(LEGACY_KEY));
    expect(res.status).toBe(200);
  });
  it('a key differing in case or with extra characters does not match', async () => {
    expect((await s.post(SALE, testSale, bearer(KEY1.toUpperCase()))).status).toBe(401);
    expect((await s.post(SALE, testSale, bearer(KEY1 + 'x'))).status).toBe(401);
  });
  it('the plaintext key appears nowhere in the database', async () => {
    const tables = ['programs', 'program_keys', 'tracking_logs', 'sale_events', 'accounts', 'workspaces'];
    for (const table of tables) {
      const dump = JSON.stringify(await s.db(table).select());
      for (const key of [KEY1, KEY2, LEGACY_KEY]) expect(dump, table).not.toContain(key);
    }
    const row = await s.db('program_keys').where({ program_id: 1 }).first();
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe(`[${dbKind}] 5.5 mandatory rotation`, () => {
  it('marked: the key authenticates; Deprecation, Sunset, Link headers and a warnings array', async () => {
    const marked = Date.now();
    const deadline = Date.now() + 3 * 86_400_000;
    await markKeyForRotation(s.db, 2, deadline, marked);
    const res = await s.post(SALE, testSale, bearer(KEY2));
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBe(`@${Math.floor(marked / 1000)}`);
    expect(res.headers.get('sunset')).toBe(new Date(deadline).toUTCString());
    expect(res.headers.get('link')).toBe(`<${s.running.deps.config.publicBaseUrl}/docs/errors#api_key_rotation_required>; rel="deprecation"`);
    expect(res.body.warnings).toEqual([
      { code: 'api_key_rotation_required', message: expect.any(String), hint: expect.any(String), rotate_by: new Date(deadline).toISOString(), docs_url: `${s.running.deps.config.publicBaseUrl}/docs/errors#api_key_rotation_required` },
    ]);
    expect(res.body.data).toBeTruthy();
  });

  it('marked: errors carry the headers and the warnings too', async () => {
    const res = await s.post(SALE, { transaction_id: 'x' }, bearer(KEY2));
    expect(res.status).toBe(400);
    expect(res.headers.get('sunset')).toBeTruthy();
    expect(res.body.warnings).toHaveLength(1);
  });

  it('marked: readiness reports it', async () => {
    const res = await s.get(READINESS, bearer(KEY2));
    expect(res.body.data.key_status).toBe('marked');
    expect(res.body.warnings).toHaveLength(1);
  });

  it('at or after the deadline: typed 401 api_key_rotation_required with the headers and no warnings, on every endpoint', async () => {
    s.clock.offsetMs = 3 * 86_400_000 + 1000;
    try {
      for (const [path, body] of [[SALE, testSale], ['/api/v1/track/refund', { transaction_id: 'x' }], ['/api/v1/track/lead', { click_id: 'clk_x' }]] as const) {
        const res = await s.post(path, body, bearer(KEY2));
        expect(res.status, path).toBe(401);
        expect(res.body, path).toEqual({ error: { code: 'api_key_rotation_required', message: expect.any(String), hint: expect.any(String), docs_url: expect.stringContaining('/docs/errors#api_key_rotation_required') } });
        expect(res.headers.get('deprecation'), path).toBeTruthy();
        expect(res.headers.get('sunset'), path).toBeTruthy();
        expect(res.headers.get('link'), path).toContain('rel="deprecation"');
      }
      const readiness = await s.get(READINESS, bearer(KEY2));
      expect(readiness.status).toBe(401);
      expect(readiness.body.error.code).toBe('api_key_rotation_required');
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('regenerate: the new key works at once, the old one answers 401 at once, the flag clears', async () => {
    const fresh = await regenerateProgramKey(s.db, 2);
    expect(fresh).toMatch(/^aff_[0-9A-Za-z]{32,}$/);
    const old = await s.post(SALE, testSale, bearer(KEY2));
    expect(old.status).toBe(401);
    expect(old.body.error.message).toBe('Invalid API token');
    const res = await s.post(SALE, testSale, bearer(fresh));
    expect(res.status).toBe(200);
    expect(res.headers.get('deprecation')).toBeNull();
    expect(res.body.warnings).toBeUndefined();
  });
});
