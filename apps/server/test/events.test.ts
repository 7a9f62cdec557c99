import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';

let s: TestServer;
let owner: Record<string, string>;
let member: Record<string, string>;
const BASE = Date.parse('2026-11-01T00:00:00Z');
const MIN = 60_000;

/**
 * Program 1 holds 40 real clicks (one a minute from BASE), 5 leads and 5 sales interleaved with
 * them, plus test events of each kind that must never be listed. Program 2 holds one click.
 */
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
  member = await signInAs(s, 'member@acme.test');
  const clicks = Array.from({ length: 40 }, (_, i) => ({ program_id: 1, link_id: 1, partner_id: 1, click_id: `clk_list_${i}`, session_id: `s${i}`, page_url: 'https://acme.test/', is_test: false, click_timestamp: BASE + i * MIN, created_at: Date.now() }));
  clicks.push({ ...clicks[0], click_id: 'clk_test_click', is_test: true, click_timestamp: BASE + 100 * MIN });
  clicks.push({ ...clicks[0], program_id: 2, click_id: 'clk_other_program', click_timestamp: BASE + 101 * MIN });
  await s.db('click_events').insert(clicks);
  await s.db('customers').insert({ click_id: 'clk_list_0', program_id: 1, partner_id: 1, status: 'lead', is_test: false, click_at: BASE, lead_at: BASE + MIN, converted_at: BASE + 2 * MIN, created_at: BASE });
  const leads = Array.from({ length: 5 }, (_, i) => ({ program_id: 1, click_id: `clk_list_${i}`, customer_key: `u${i}`, provisional: false, source: 'server', is_test: false, lead_timestamp: BASE + (i * 8 + 0.5) * MIN, created_at: Date.now() }));
  leads.push({ ...leads[0], customer_key: 'test', is_test: true, lead_timestamp: BASE + 102 * MIN });
  leads.push({ ...leads[0], customer_key: 'prov', provisional: true, lead_timestamp: BASE + 103 * MIN });
  await s.db('lead_events').insert(leads);
  const sales = Array.from({ length: 5 }, (_, i) => ({ program_id: 1, click_id: `clk_list_${i}`, processor_event_id: `list_${dbKind}_${i}`, amount_cents: 1000 + i, currency: 'USD', sale_type: 'one_time', payment_status: 'paid', is_recurring: i % 2 === 1, is_test: false, sale_date: BASE + (i * 8 + 0.75) * MIN, created_at: Date.now() }));
  sales.push({ ...sales[0], processor_event_id: `list_test_${dbKind}`, is_test: true, sale_date: BASE + 104 * MIN });
  await s.db('sale_events').insert(sales);
});
afterAll(() => s?.close());

const list = (query = '', who = owner) => s.get(`/api/tracking/events/1${query}`, who);

describe(`[${dbKind}] 4.6 GET /api/tracking/events/:programId`, () => {
  it('merges the three types newest first with the normalized shapes of 2.5', async () => {
    const res = await list('?pageSize=5');
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: { event_type: string }) => e.event_type)).toEqual(['click', 'click', 'click', 'click', 'click']);
    const all = await list('?pageSize=100');
    const times = all.body.data.map((e: { timestamp: string }) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const [sale] = all.body.data.filter((e: { event_type: string }) => e.event_type === 'conversion');
    expect(sale).toEqual({ id: expect.any(Number), event_type: 'conversion', timestamp: new Date(BASE + 32.75 * MIN).toISOString(), click_id: 'clk_list_4', createdAt: expect.any(String), amount_cents: 1004, currency: 'USD', sale_type: 'one_time', payment_status: 'paid', processor_event_id: `list_${dbKind}_4`, is_recurring: false, partner: null, refund_status: 'none', refunded_amount_cents: 0 });
    const lead = all.body.data.find((e: { event_type: string; customer_key: string }) => e.event_type === 'lead' && e.customer_key === 'u0');
    expect(lead).toEqual({ id: expect.any(Number), event_type: 'lead', timestamp: new Date(BASE + 0.5 * MIN).toISOString(), click_id: 'clk_list_0', createdAt: expect.any(String), customer_key: 'u0', session_id: null, page_url: null, converted: false, partner: null });
    const click0 = all.body.data.find((e: { click_id: string; event_type: string }) => e.event_type === 'click' && e.click_id === 'clk_list_0');
    expect(click0).toMatchObject({ event_type: 'click', timestamp: new Date(BASE).toISOString(), session_id: 's0', page_url: 'https://acme.test/', referrer_url: null, geo_country: null, device_type: null, converted: true });
    expect(Object.keys(click0).sort()).toEqual(['browser_name', 'click_id', 'converted', 'createdAt', 'device_os', 'device_type', 'event_type', 'geo_city', 'geo_country', 'geo_region', 'id', 'page_url', 'partner', 'referrer_url', 'session_id', 'timestamp'].sort());
  });

  it('excludes test events and provisional leads', async () => {
    const all = await list('?pageSize=100');
    const ids = all.body.data.map((e: { click_id: string; customer_key?: string; processor_event_id?: string }) => e.processor_event_id ?? e.customer_key ?? e.click_id);
    expect(ids).not.toContain('clk_test_click');
    expect(ids).not.toContain('test');
    expect(ids).not.toContain('prov');
    expect(ids).not.toContain(`list_test_${dbKind}`);
    expect(ids).not.toContain('clk_other_program');
  });

  it('caps each type at 3 x pageSize before the merge; total is the merged set', async () => {
    const res = await list('?pageSize=10');
    expect(res.body.meta.pagination).toEqual({ page: 1, pageSize: 10, pageCount: 4, total: 40 });
    const clicksOnly = await list('?pageSize=10&eventType=click');
    expect(clicksOnly.body.meta.pagination.total).toBe(30);
    expect(clicksOnly.body.data[0].click_id).toBe('clk_list_39');
  });

  it('pages beyond the merged set are empty even when older events exist', async () => {
    const res = await list('?pageSize=10&page=5');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta.pagination).toEqual({ page: 5, pageSize: 10, pageCount: 4, total: 40 });
    const lastClicks = await list('?pageSize=10&page=3&eventType=click');
    expect(lastClicks.body.data.at(-1).click_id).toBe('clk_list_10');
  });

  it('narrowing dateFrom/dateTo reaches older events; both bounds are inclusive', async () => {
    const from = new Date(BASE + 2 * MIN).toISOString();
    const to = new Date(BASE + 4 * MIN).toISOString();
    const res = await list(`?eventType=click&dateFrom=${encodeURIComponent(from)}&dateTo=${encodeURIComponent(to)}`);
    expect(res.body.data.map((e: { click_id: string }) => e.click_id)).toEqual(['clk_list_4', 'clk_list_3', 'clk_list_2']);
    const day = await list('?pageSize=100&dateFrom=2026-11-01&dateTo=2026-11-01');
    expect(day.body.meta.pagination.total).toBe(50);
    expect((await list('?dateFrom=2026-11-02')).body.meta.pagination.total).toBe(0);
  });

  it('filters by eventType', async () => {
    const res = await list('?eventType=conversion');
    expect(res.body.data.map((e: { event_type: string }) => e.event_type)).toEqual(Array(5).fill('conversion'));
    expect(res.body.data.map((e: { amount_cents: number }) => e.amount_cents)).toEqual([1004, 1003, 1002, 1001, 1000]);
  });

  it('defaults to page 1 and pageSize 10', async () => {
    const res = await list();
    expect(res.body.meta.pagination).toMatchObject({ page: 1, pageSize: 10 });
    expect(res.body.data).toHaveLength(10);
  });

  it('a member with tracking:list sees the same listing', async () => {
    expect((await list('', member)).status).toBe(200);
  });

  const invalid: Array<[string, string]> = [
    ['?page=0', 'page must be a positive integer'],
    ['?page=abc', 'page must be a positive integer'],
    ['?pageSize=0', 'pageSize must be an integer from 1 to 100'],
    ['?pageSize=101', 'pageSize must be an integer from 1 to 100'],
    ['?eventType=sale', 'eventType must be one of: click, lead, conversion'],
    ['?dateFrom=yesterday', 'dateFrom must be an ISO 8601 date or time'],
    ['?dateTo=2026-13-01', 'dateTo must be an ISO 8601 date or time'],
    ['?dateFrom=2026-11-02&dateTo=2026-11-01', 'dateFrom must not be after dateTo'],
  ];
  for (const [query, message] of invalid) {
    it(`400 ${message} (${query})`, async () => {
      const res = await list(query);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ data: null, error: { status: 400, name: 'BadRequestError', message, details: {} } });
    });
  }

  it('401 without a session, 404 for an unknown program or another workspace’s, 400 for a non-integer id', async () => {
    expect((await s.get('/api/tracking/events/1')).status).toBe(401);
    expect((await s.get('/api/tracking/events/999', owner)).status).toBe(404);
    expect((await s.get('/api/tracking/events/4', owner)).status).toBe(404);
    expect((await s.get('/api/tracking/events/abc', owner)).body.error.message).toBe('programId must be a positive integer');
  });

  it('403 for a restricted member', async () => {
    const restricted = await signInAs(s, 'restricted@acme.test');
    const res = await list('', restricted);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('Your role in this workspace does not allow this (tracking:list required)');
  });
});
