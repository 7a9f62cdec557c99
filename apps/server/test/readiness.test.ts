import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const READINESS = '/api/v1/programs/me/readiness';

describe(`[${dbKind}] 4.5 GET /api/v1/programs/me/readiness`, () => {
  it('lists the checklist with a next step for each unmet item', async () => {
    const res = await s.get(READINESS, bearer(KEY2));
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.body.data.ready).toBe(false);
    for (const item of res.body.data.checklist) {
      if (item.key === 'key_status') expect(item.done).toBe(true);
      else expect(item).toMatchObject({ done: false, next_step: expect.any(String) });
    }
  });

  it('turns ready after a click, a lead and a sale; a test sale ticks the test item', async () => {
    const id = await click(s);
    await serverLead(s, id, 'ready-user');
    await sale(s, { transaction_id: `ready-${dbKind}-${Date.now()}`, click_id: id });
    await s.post('/api/v1/track/sale', { additional_data: { test_mode: true } }, bearer(KEY1));
    const res = await s.get(READINESS, bearer(KEY1));
    const byKey = Object.fromEntries(res.body.data.checklist.map((i: { key: string; done: boolean }) => [i.key, i.done]));
    expect(byKey).toMatchObject({ click_seen: true, lead_seen: true, sale_seen: true, test_event_seen: true, processor_connected: false });
    expect(res.body.data.ready).toBe(true);
  });
});

describe(`[${dbKind}] 5.3 readiness failures in the typed envelope`, () => {
  const typed = (message: string) => ({ error: { code: 'invalid_key', message } });
  it('401 malformed header', async () => {
    const res = await s.get(READINESS);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(typed('Missing or malformed Authorization header. Expected: Bearer <api_token>.'));
  });
  it('401 Missing API token.', async () => {
    const res = await s.get(READINESS, { authorization: 'Bearer ' });
    expect(res.body).toEqual(typed('Missing API token.'));
  });
  it('401 Invalid API token.', async () => {
    const res = await s.get(READINESS, bearer('aff_nope'));
    expect(res.body).toEqual(typed('Invalid API token.'));
  });
  it('500 internal_error with retry_after_seconds 10 when the computation fails', async () => {
    const original = s.running.deps.db;
    // Break the database the readiness route reads, then restore it.
    await s.db.schema.renameTable('tracking_logs', 'tracking_logs_tmp');
    await s.db.schema.renameTable('sale_events', 'sale_events_tmp');
    try {
      const res = await s.get(READINESS, bearer(KEY1));
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal_error', message: 'Failed to compute readiness. Retry shortly.', retry_after_seconds: 10 } });
      expect(res.headers.get('x-request-id')).toBeTruthy();
    } finally {
      await original.schema.renameTable('sale_events_tmp', 'sale_events');
      await original.schema.renameTable('tracking_logs_tmp', 'tracking_logs');
    }
  });
});
