/** Short click → lead → sale steps that many tests start from. */
import { expect } from 'vitest';
import type { TestServer } from './test-server.js';
import { bearer, KEY1 } from './index.js';

export async function click(s: TestServer, aff = 'pat20', extra: Record<string, unknown> = {}): Promise<string> {
  const res = await s.post('/api/v1/track/click', { affiliate_url: `https://acme.test/pricing?aff=${aff}`, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body.click_id as string;
}

export async function serverLead(s: TestServer, clickId: string, customerKey: string, key = KEY1) {
  const res = await s.post('/api/v1/track/lead', { click_id: clickId, customer_key: customerKey }, bearer(key));
  expect(res.status, res.text).toBe(200);
  return res.body;
}

export async function sale(s: TestServer, body: Record<string, unknown>, key = KEY1) {
  return s.post('/api/v1/track/sale', { amount_cents: 10_000, ...body }, bearer(key));
}
