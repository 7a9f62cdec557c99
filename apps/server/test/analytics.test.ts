/**
 * Analytics (docs/analytics.md): bot clicks flagged and counted nowhere, unique clicks, the rollups
 * kept by the click batch and the lead, sale and refund units of work, and the stats API that
 * reads them (dashboard, agent API). The server runs on a stopped clock: each rule happens on a
 * day of its own, and each query reads only that day.
 */
import type { Knex } from 'knex';
import { STATS_DIMENSIONS } from '@reftrack/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { signInAs } from './helpers/accounts.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { rebuildStats } from '../src/ops/stats-rebuild.js';
import { RECENT, RollupSet, rollupWrites, SETTLED, upsertRollups } from '../src/db/stats-rollups.js';
import { settleEndedRollups } from '../src/db/stats-rollups-recent.js';
import { UniqueClickWindow } from '../src/domain/unique-clicks.js';

let s: TestServer;
let owner: Record<string, string>;
beforeAll(async () => {
  s = await startTestServer();
  owner = await signInAs(s, 'owner@acme.test');
});
afterAll(() => s?.close());

const CLICK = '/api/v1/track/click';
const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0';

// Leads, sales and refunds reach the rollups through the outbox (jobs/stats-conversions.ts): drained first.
const stats = async (query: string, headers = owner) => {
  await s.running.deps.outbox.drain();
  return s.get(`/api/dashboard/programs/1/stats?${query}`, headers);
};
const at = (iso: string) => {
  s.clock.at = Date.parse(iso);
};

describe(`[${dbKind}] bots, crawlers and link previews`, () => {
  it('a bot click is answered as any click, stored flagged, and creates no customer and no counter', async () => {
    at('2026-03-02T10:00:00Z');
    const before = await s.db('referral_links').where({ short_link: 'pat20' }).first('clicks');
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'user-agent': SLACK });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, click_id: expect.stringMatching(/^clk_/), partner_code: 'pat', cookie_window_days: 60 });
    const row = await s.db('click_events').where({ click_id: res.body.click_id }).first('is_bot', 'user_agent');
    expect(Boolean(row.is_bot)).toBe(true);
    expect(row.user_agent).toBe(SLACK);
    expect(await s.db('customers').where({ click_id: res.body.click_id }).first()).toBeUndefined();
    const after = await s.db('referral_links').where({ short_link: 'pat20' }).first('clicks');
    expect(Number(after.clicks)).toBe(Number(before.clicks));
  });

  it('the user_agent field decides before the header, and a crawler is a bot too', async () => {
    at('2026-03-02T11:00:00Z');
    const id = await click(s, 'pat20', { user_agent: GOOGLEBOT });
    expect(Boolean((await s.db('click_events').where({ click_id: id }).first('is_bot')).is_bot)).toBe(true);
    const person = await click(s, 'pat20', { user_agent: FIREFOX });
    expect(Boolean((await s.db('click_events').where({ click_id: person }).first('is_bot')).is_bot)).toBe(false);
  });

  it("the server SDK's own user agent (no visitor's forwarded) and a missing one are not called bots", async () => {
    at('2026-03-02T11:30:00Z');
    const sdk = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, { 'user-agent': 'reftrack-sdk-node/0.1.0 node/v20.0.0' });
    expect(Boolean((await s.db('click_events').where({ click_id: sdk.body.click_id }).first('is_bot')).is_bot)).toBe(false);
    expect(await s.db('customers').where({ click_id: sdk.body.click_id }).first('id')).toBeDefined();
  });

  it('HTTP libraries, command-line clients and headless browsers are integrations, not bots: their click attributes the lead', async () => {
    at('2025-11-20T11:40:00Z');
    const agents = ['node', 'undici', 'curl/8.5.0', 'python-requests/2.31.0', 'Go-http-client/1.1', 'okhttp/4.12.0', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36'];
    for (const [i, agent] of agents.entries()) {
      const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, { 'user-agent': agent });
      expect(Boolean((await s.db('click_events').where({ click_id: res.body.click_id }).first('is_bot')).is_bot), agent).toBe(false);
      const lead = await s.post('/api/v1/track/lead', { click_id: res.body.click_id, customer_key: `integration-${dbKind}-${i}` }, bearer(KEY1));
      expect(lead.status, agent).toBe(200);
    }
    // A crawler that names an HTTP library in its comment is still a crawler.
    const linkedIn = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, { 'user-agent': 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)' });
    expect(Boolean((await s.db('click_events').where({ click_id: linkedIn.body.click_id }).first('is_bot')).is_bot)).toBe(true);
  });

  it('a bot click attributes nothing: a lead naming its click id finds no customer', async () => {
    at('2026-03-02T12:00:00Z');
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'user-agent': SLACK });
    const lead = await s.post('/api/v1/track/lead', { click_id: res.body.click_id, customer_key: 'bot-user' }, bearer(KEY1));
    expect(lead.status).toBe(400);
    expect(lead.body.error.message).toBe('Customer not found. Provide a valid click_id or customer_key.');
  });

  it('a bot returning with an existing click id keeps that customer as it was; its click is logged flagged', async () => {
    at('2026-03-02T13:00:00Z');
    const id = await click(s, 'pat20');
    const again = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10', existing_click_id: id }, { 'user-agent': SLACK });
    expect(again.body.click_id).toBe(id);
    const customer = await s.db('customers').where({ click_id: id }).first('partner_id');
    expect(customer.partner_id).toBe(1);
    const rows = await s.db('click_events').where({ click_id: id }).orderBy('id').select('is_bot');
    expect(rows.map((r) => Boolean(r.is_bot))).toEqual([false, true]);
  });

  it('stats count bot clicks only as bot_clicks; the listing shows them by default and filters them on request', async () => {
    const day = 'from=2026-03-02&to=2026-03-02';
    const res = await stats(day);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.totals).toMatchObject({ clicks: 3, unique_clicks: 3, bot_clicks: 4 });
    const window = 'dateFrom=2026-03-02&dateTo=2026-03-02&eventType=click&pageSize=100';
    const all = await s.get(`/api/tracking/events/1?${window}`, owner);
    const only = await s.get(`/api/tracking/events/1?${window}&bots=only`, owner);
    const without = await s.get(`/api/tracking/events/1?${window}&bots=exclude`, owner);
    expect(all.body.meta.pagination.total).toBe(7);
    expect(only.body.meta.pagination.total).toBe(4);
    expect(without.body.meta.pagination.total).toBe(3);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(Object.keys(without.body.data[0]).sort());
    // Only bots: their clicks, and no leads or sales (those are people's).
    const onlyAll = await s.get('/api/tracking/events/1?dateFrom=2026-03-02&dateTo=2026-03-02&pageSize=100&bots=only', owner);
    expect(onlyAll.body.data.map((e: { event_type: string }) => e.event_type)).toEqual(['click', 'click', 'click', 'click']);
    const bad = await s.get(`/api/tracking/events/1?bots=maybe`, owner);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('bots must be one of: include, exclude, only');
  });
});

describe(`[${dbKind}] unique clicks`, () => {
  it('the same address and user agent on the same link within the window counts once; raw clicks are all kept', async () => {
    at('2026-03-03T09:00:00Z');
    const visitor = { 'x-forwarded-for': '203.0.113.7', 'user-agent': FIREFOX };
    for (let i = 0; i < 3; i++) expect((await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, visitor)).status).toBe(200);
    // Another link, another address: each unique.
    expect((await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, visitor)).status).toBe(200);
    expect((await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'x-forwarded-for': '203.0.113.8', 'user-agent': FIREFOX })).status).toBe(200);
    const res = await stats('from=2026-03-03&to=2026-03-03&group_by=link');
    expect(res.body.data.totals).toMatchObject({ clicks: 5, unique_clicks: 3 });
    const pat = res.body.data.breakdown.rows.find((r: { label: string }) => r.label === 'pat20');
    expect(pat).toMatchObject({ clicks: 4, unique_clicks: 2 });
    const listed = await s.get('/api/tracking/events/1?dateFrom=2026-03-03&dateTo=2026-03-03&eventType=click&pageSize=100', owner);
    expect(listed.body.meta.pagination.total).toBe(5);
  });

  it('a returning click id from another address counts once; after the window the visitor counts again', async () => {
    at('2026-03-03T12:00:00Z');
    const id = await click(s, 'sam10', { user_agent: FIREFOX });
    await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10', existing_click_id: id, user_agent: FIREFOX }, { 'x-forwarded-for': '198.51.100.20' });
    const mid = await stats('from=2026-03-03T12:00:00Z&to=2026-03-03T13:00:00Z');
    expect(mid.body.data.totals).toMatchObject({ clicks: 2, unique_clicks: 1 });
    // The default window is a day (UNIQUE_CLICK_WINDOW_MINUTES).
    at('2026-03-04T12:30:00Z');
    await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10', existing_click_id: id, user_agent: FIREFOX }, { 'x-forwarded-for': '198.51.100.21' });
    const later = await stats('from=2026-03-04T12:00:00Z&to=2026-03-04T13:00:00Z');
    expect(later.body.data.totals).toMatchObject({ clicks: 1, unique_clicks: 1 });
  });
});

describe(`[${dbKind}] rollups and the stats API`, () => {
  it('counts clicks, leads, sales, revenue per currency and refunds, by partner, link, country, referrer and UTM source', async () => {
    at('2026-03-10T08:15:00Z');
    const landing = 'https://acme.test/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring';
    const de = { 'cf-ipcountry': 'DE' };
    const pat = (await s.post(CLICK, { affiliate_url: `${landing}&aff=pat20`, page_url: landing, referrer_url: 'https://www.news.test/post' }, de)).body.click_id as string;
    await s.post(CLICK, { affiliate_url: `${landing}&aff=pat20`, page_url: landing, referrer_url: 'https://www.news.test/other' }, de);
    const sam = (await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, { 'cf-ipcountry': 'US' })).body.click_id as string;
    at('2026-03-10T09:00:00Z');
    await serverLead(s, pat, 'cust-pat-1');
    const sold = await sale(s, { transaction_id: `an-usd-${dbKind}`, customer_key: 'cust-pat-1', amount_cents: 5000, currency: 'USD' });
    expect(sold.status, sold.text).toBe(200);
    expect((await sale(s, { transaction_id: `an-eur-${dbKind}`, click_id: sam, amount_cents: 700, currency: 'EUR' })).status).toBe(200);
    at('2026-03-10T15:00:00Z');
    expect((await s.post('/api/v1/track/refund', { transaction_id: `an-usd-${dbKind}`, reason: 'refund' }, bearer(KEY1))).status).toBe(200);

    const day = 'from=2026-03-10&to=2026-03-10';
    const res = await stats(`${day}&group_by=partner`);
    expect(res.status, res.text).toBe(200);
    const data = res.body.data;
    expect(data).toMatchObject({ program_id: 1, from: '2026-03-10T00:00:00.000Z', to: '2026-03-11T00:00:00.000Z', interval: 'day', time_zone: 'UTC' });
    expect(data.totals).toEqual({
      clicks: 3, unique_clicks: 3, bot_clicks: 0, leads: 1, sales: 2,
      revenue: [{ currency: 'USD', amount_cents: 5000 }, { currency: 'EUR', amount_cents: 700 }],
      refunds: 1, refunded: [{ currency: 'USD', amount_cents: 5000 }],
    });
    expect(data.conversion).toEqual({ click_to_lead: 0.3333, lead_to_sale: 2, click_to_sale: 0.6667 });
    expect(data.series).toHaveLength(1);
    expect(data.series[0]).toMatchObject({ start: '2026-03-10T00:00:00Z', clicks: 3, sales: 2 });
    expect(data.breakdown.rows.map((r: { key: string; label: string; clicks: number; sales: number }) => [r.key, r.label, r.clicks, r.sales])).toEqual([
      ['1', 'Pat', 2, 1],
      ['2', 'Sam', 1, 1],
    ]);

    const country = (await stats(`${day}&group_by=country`)).body.data.breakdown.rows;
    expect(country.map((r: { key: string; clicks: number; leads: number; revenue: unknown }) => [r.key, r.clicks, r.leads, r.revenue])).toEqual([
      ['DE', 2, 1, [{ currency: 'USD', amount_cents: 5000 }]],
      ['US', 1, 0, [{ currency: 'EUR', amount_cents: 700 }]],
    ]);
    const referrer = (await stats(`${day}&group_by=referrer`)).body.data.breakdown.rows;
    expect(referrer.map((r: { key: string; label: string; clicks: number }) => [r.key, r.label, r.clicks])).toEqual([
      ['news.test', 'news.test', 2],
      ['', '(unknown)', 1],
    ]);
    const utm = (await stats(`${day}&group_by=utm_source`)).body.data.breakdown.rows;
    expect(utm[0]).toMatchObject({ key: 'newsletter', clicks: 2, sales: 1 });
    const filtered = (await stats(`${day}&utm_campaign=spring`)).body.data;
    expect(filtered.totals).toMatchObject({ clicks: 2, leads: 1, sales: 1 });
    const partner = (await stats(`${day}&partner_id=2&group_by=link`)).body.data;
    expect(partner.totals).toMatchObject({ clicks: 1, sales: 1, revenue: [{ currency: 'EUR', amount_cents: 700 }] });
    expect(partner.breakdown.rows).toEqual([expect.objectContaining({ key: String(partner.breakdown.rows[0].key), label: 'sam10', clicks: 1 })]);
    const hourly = (await stats('from=2026-03-10T08:00:00Z&to=2026-03-10T10:00:00Z&interval=hour')).body.data.series;
    expect(hourly.map((b: { start: string; clicks: number; leads: number }) => [b.start, b.clicks, b.leads])).toEqual([
      ['2026-03-10T08:00:00Z', 3, 0],
      ['2026-03-10T09:00:00Z', 0, 1],
    ]);
  });

  it('clicks reach the rollups from their batches’ clicks.recorded events; a version 1 event (the release before rolled its batch up itself) is not counted again', async () => {
    const day = '2026-07-15';
    const hour = `${day}T10:00:00.000Z`;
    const rollup = { link_id: 1, partner_id: 1, hour, dims: ['', 'desktop', 'Firefox', '', '', '', ''], clicks: 4, unique_clicks: 3, bot_clicks: 0 };
    const payload = { program_id: 1, clicks: 4, links: [{ link_id: 1, partner_id: 1, clicks: 4 }], first_at: hour, last_at: hour, rollups: [rollup] };
    const row = (version: number, n: number) => ({
      event_id: `evt_${dbKind}clicksv${version}${n}`.padEnd(28, '0').slice(0, 28),
      type: 'clicks.recorded',
      version,
      workspace_id: 1,
      program_id: 1,
      payload: JSON.stringify(payload),
      occurred_at: Date.parse(hour),
    });
    await s.db('outbox_events').insert([row(1, 1), row(2, 2)]);
    const res = await stats(`from=${day}&to=${day}&group_by=browser`);
    expect(res.body.data.totals).toMatchObject({ clicks: 4, unique_clicks: 3, bot_clicks: 0 });
    expect(res.body.data.breakdown.rows).toEqual([expect.objectContaining({ label: 'Firefox', clicks: 4, unique_clicks: 3 })]);
  });

  it('a breakdown over whole months, whole days and ragged hours adds up to the totals summed from hours', async () => {
    // February's last hours and days, all of March (a month's rows), April's first days and hours.
    const range = 'from=2026-02-27T05:00:00Z&to=2026-04-21T07:00:00Z';
    for (const group of ['partner', 'link', 'country', 'referrer']) {
      const res = await stats(`${range}&group_by=${group}`);
      expect(res.status, res.text).toBe(200);
      const { totals, breakdown } = res.body.data;
      const sum = (name: string) => breakdown.rows.reduce((n: number, r: Record<string, number>) => n + r[name], 0);
      expect(totals.clicks).toBeGreaterThan(3);
      for (const name of ['clicks', 'unique_clicks', 'leads', 'sales', 'refunds']) expect(sum(name), `${group} ${name}`).toBe(totals[name]);
    }
  });

  it("series use the caller's time zone: a click late in a New York evening is on that day there, on the next in UTC", async () => {
    at('2026-04-21T02:30:00Z');
    await click(s, 'sam10');
    const ny = (await stats('from=2026-04-20&to=2026-04-21&tz=America/New_York')).body.data;
    expect(ny.from).toBe('2026-04-20T04:00:00.000Z');
    expect(ny.series.map((b: { start: string; clicks: number }) => [b.start, b.clicks])).toEqual([
      ['2026-04-20T00:00:00-04:00', 1],
      ['2026-04-21T00:00:00-04:00', 0],
    ]);
    const utc = (await stats('from=2026-04-20&to=2026-04-21')).body.data;
    expect(utc.series.map((b: { start: string; clicks: number }) => [b.start, b.clicks])).toEqual([
      ['2026-04-20T00:00:00Z', 0],
      ['2026-04-21T00:00:00Z', 1],
    ]);
    const months = (await stats('from=2026-03-01&to=2026-04-30&interval=month&tz=Europe/Paris')).body.data.series;
    expect(months.map((b: { start: string }) => b.start)).toEqual(['2026-03-01T00:00:00+01:00', '2026-04-01T00:00:00+02:00']);
  });

  it('a local day of 23 hours (the spring change in Paris) holds its own hours, and the next day starts at the new offset', async () => {
    at('2026-03-28T23:30:00Z'); // 00:30 on 29 March in Paris (CET)
    await click(s, 'pat20');
    at('2026-03-29T22:30:00Z'); // 00:30 on 30 March in Paris (CEST since 02:00 on the 29th)
    await click(s, 'pat20');
    const paris = (await stats('from=2026-03-28&to=2026-03-30&tz=Europe/Paris')).body.data.series;
    expect(paris.map((b: { start: string; clicks: number }) => [b.start, b.clicks])).toEqual([
      ['2026-03-28T00:00:00+01:00', 0],
      ['2026-03-29T00:00:00+01:00', 1],
      ['2026-03-30T00:00:00+02:00', 1],
    ]);
  });

  it('a daily series in a shifted zone (daily rows corrected by hours) equals its hours summed per local day, across a daylight-saving change', async () => {
    for (const iso of ['2026-03-08T03:30:00Z', '2026-03-08T06:10:00Z', '2026-03-09T03:50:00Z', '2026-03-09T04:30:00Z', '2026-03-12T23:59:00Z']) {
      at(iso);
      await click(s, 'pat20');
    }
    const range = 'from=2026-03-05&to=2026-03-12&tz=America/New_York';
    const days = (await stats(`${range}&interval=day`)).body.data.series as Array<{ start: string; clicks: number; sales: number; revenue: unknown[] }>;
    const hours = (await stats(`${range}&interval=hour`)).body.data.series as Array<{ start: string; clicks: number; sales: number }>;
    const perDay = new Map<string, [number, number]>();
    for (const h of hours) {
      const [c, n] = perDay.get(h.start.slice(0, 10)) ?? [0, 0];
      perDay.set(h.start.slice(0, 10), [c + h.clicks, n + h.sales]);
    }
    expect(days.map((d) => [d.start.slice(0, 10), d.clicks, d.sales])).toEqual([...perDay].map(([day, [c, n]]) => [day, c, n]));
    expect(days.find((d) => d.start.startsWith('2026-03-07'))?.clicks).toBe(1);
    expect(days.find((d) => d.start.startsWith('2026-03-12'))?.clicks).toBe(1);
    expect(days.every((d) => d.revenue.length === 0 || d.sales > 0)).toBe(true);
  });

  it("a year of New York days (each day's row less its early hours plus the next day's; the breakdown's month less its first hours) equals the year's hours summed per local day", async () => {
    // The year's edges (31 October in New York, 1 November), a daylight-saving change, a day's
    // early hours in UTC (the hours the daily rows are corrected by), and a sale in those hours.
    const edges = ['2025-11-01T03:30:00Z', '2025-11-01T04:30:00Z', '2025-11-02T05:30:00Z', '2026-01-15T04:59:00Z', '2026-01-15T05:00:00Z', '2026-07-04T03:00:00Z', '2026-11-01T03:30:00Z', '2026-11-01T04:30:00Z'];
    for (const iso of edges) {
      at(iso);
      await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', referrer_url: 'https://year.test/' });
    }
    at('2026-01-15T02:00:00Z');
    const early = (await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' })).body.click_id as string;
    expect((await sale(s, { transaction_id: `an-ny-year-${dbKind}`, click_id: early, amount_cents: 1234, currency: 'EUR' })).status).toBe(200);
    const year = 'from=2025-11-01&to=2026-10-31&tz=America/New_York';
    const report = (await stats(`${year}&interval=day`)).body.data;
    const days = report.series as Array<{ start: string; clicks: number; sales: number; revenue: Array<{ currency: string; amount_cents: number }> }>;
    expect(days).toHaveLength(365);
    // The hours, 28 local days a request (an hourly series covers at most 31 days).
    const perDay = new Map<string, [number, number, number]>();
    for (let d = Date.UTC(2025, 10, 1); d <= Date.UTC(2026, 9, 31); d += 28 * 86_400_000) {
      const from = new Date(d).toISOString().slice(0, 10);
      const to = new Date(Math.min(d + 27 * 86_400_000, Date.UTC(2026, 9, 31))).toISOString().slice(0, 10);
      const res = await stats(`from=${from}&to=${to}&tz=America/New_York&interval=hour`);
      expect(res.status, res.text).toBe(200);
      for (const h of res.body.data.series as Array<{ start: string; clicks: number; sales: number; revenue: Array<{ amount_cents: number }> }>) {
        const [c, n, r] = perDay.get(h.start.slice(0, 10)) ?? [0, 0, 0];
        perDay.set(h.start.slice(0, 10), [c + h.clicks, n + h.sales, r + h.revenue.reduce((a, x) => a + x.amount_cents, 0)]);
      }
    }
    expect(days.map((d) => [d.start.slice(0, 10), d.clicks, d.sales, d.revenue.reduce((a, x) => a + x.amount_cents, 0)])).toEqual([...perDay].map(([day, v]) => [day, ...v]));
    expect(days[0].start).toBe('2025-11-01T00:00:00-04:00');
    expect(days.find((d) => d.start.startsWith('2026-01-14'))?.revenue).toEqual([{ currency: 'EUR', amount_cents: 1234 }]);
    for (const group of ['partner', 'link', 'referrer']) {
      const res = await stats(`${year}&group_by=${group}`);
      expect(res.status, res.text).toBe(200);
      const { totals, breakdown } = res.body.data;
      const sum = (name: string) => breakdown.rows.reduce((n: number, r: Record<string, number>) => n + r[name], 0);
      for (const name of ['clicks', 'unique_clicks', 'leads', 'sales', 'refunds']) expect(sum(name), `${group} ${name}`).toBe(totals[name]);
      // A value seen only in the hours taken off the month is no row of the breakdown.
      for (const row of breakdown.rows) expect(row.clicks + row.bot_clicks + row.leads + row.sales + row.refunds, `${group} ${row.key}`).toBeGreaterThan(0);
    }
    const referrers = (await stats(`${year}&group_by=referrer`)).body.data.breakdown.rows as Array<{ key: string; clicks: number }>;
    expect(referrers.find((r) => r.key === 'year.test')?.clicks).toBe(6);
  });

  it('a half-hour zone rounds its day boundaries down to the UTC hour (documented)', async () => {
    at('2026-05-10T18:45:00Z'); // 00:15 on 11 May in Kolkata (UTC+05:30)
    await click(s, 'sam10');
    const kolkata = (await stats('from=2026-05-10&to=2026-05-11&tz=Asia/Kolkata')).body.data;
    expect(kolkata.from).toBe('2026-05-09T18:00:00.000Z');
    expect(kolkata.series.map((b: { start: string; clicks: number }) => [b.start, b.clicks])).toEqual([
      ['2026-05-10T00:00:00+05:30', 0],
      ['2026-05-11T00:00:00+05:30', 1],
    ]);
  });

  it('refuses a bad query with a clear message and changes nothing', async () => {
    const cases: Array<[string, string]> = [
      ['interval=week', 'interval must be one of: hour, day, month'],
      ['tz=Mars/Olympus', 'tz must be an IANA time zone, such as Europe/Paris'],
      ['from=yesterday', 'from must be an ISO 8601 date or time'],
      ['from=2026-03-10&to=2026-03-01', 'from must be before to, and the range at most 732 days'],
      ['from=2026-01-01&to=2026-03-01&interval=hour', 'An hourly series covers at most 31 days; choose interval=day or month'],
      ['group_by=city', 'group_by must be one of: partner, link, country, device, browser, referrer, utm_source, utm_medium, utm_campaign'],
      ['group_by=country&partner_id=1', 'group_by=country cannot be combined with the partner_id filter: dimensions are rolled up for the whole program'],
      ['country=DE&partner_id=1', 'Filter by at most one of: partner_id, link_id, or one dimension (country, device, browser, referrer, utm_source, utm_medium, utm_campaign)'],
      ['partner_id=abc', 'partner_id must be a positive integer'],
    ];
    for (const [query, message] of cases) {
      const res = await stats(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.message, query).toBe(message);
    }
  });

  it('needs a dashboard session of the program’s workspace', async () => {
    expect((await s.get('/api/dashboard/programs/1/stats')).status).toBe(401);
    expect((await stats('', owner)).status).toBe(200);
    expect((await s.get('/api/dashboard/programs/999/stats', owner)).status).toBe(404);
  });

  it('the agent API answers the same report to a key with programs:read; a key without it is refused', async () => {
    const reader = await createAgentKey(s.db, 1, ['programs:read'], 'stats');
    const other = await createAgentKey(s.db, 1, ['commissions:read'], 'books');
    const query = 'from=2026-03-10&to=2026-03-10&group_by=partner';
    await s.running.deps.outbox.drain();
    const res = await s.get(`/api/agent/v1/programs/1/stats?${query}`, bearer(reader));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual((await stats(query)).body);
    const refused = await s.get(`/api/agent/v1/programs/1/stats?${query}`, bearer(other));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('This agent key lacks the programs:read scope');
  });
});

describe(`[${dbKind}] backfill: reftrack-server stats rebuild`, () => {
  it('recomputes the rollups from the raw events: the same stats, and bot flags re-checked against the list', async () => {
    const query = 'from=2026-03-01&to=2026-04-30&group_by=partner';
    const before = (await stats(query)).body.data;
    const slack = await s.db('click_events').where({ user_agent: SLACK }).first('id');
    await s.db('click_events').where({ id: slack.id }).update({ is_bot: false });
    const report = await rebuildStats(s.db, 86_400_000);
    expect(report.bot_flags_changed).toBe(1);
    expect(Boolean((await s.db('click_events').where({ id: slack.id }).first('is_bot')).is_bot)).toBe(true);
    const after = (await stats(query)).body.data;
    // A click's address is not stored, so the rebuild tells visitors apart by click id only.
    const counts = (d: typeof before) => ({ ...d.totals, unique_clicks: undefined });
    expect(counts(after)).toEqual(counts(before));
    expect(after.series).toHaveLength(before.series.length);
    const day = 'from=2026-03-10&to=2026-03-10&group_by=country';
    expect((await stats(day)).body.data.breakdown.rows.map((r: { key: string; clicks: number; sales: number }) => [r.key, r.clicks, r.sales])).toEqual([
      ['DE', 2, 1],
      ['US', 1, 1],
    ]);
  });

  it('closes a stats pass left open by a thread that died mid-pass: the rebuild counted its events, so no part of it is written after', async () => {
    await s.running.deps.outbox.drain();
    // The open pass ends where the cursor is (so that the stats thread's poll, should it resume it first, moves nothing).
    const at = await s.db('outbox_cursors').where({ consumer: 'stats-conversions' }).first('last_txid', 'last_id');
    await s.db('outbox_cursors').where({ consumer: 'stats-conversions' }).update({ pass_last_txid: at.last_txid, pass_last_id: at.last_id, pass_parts_done: 2, pass_digest: '9:abc' });
    await rebuildStats(s.db, 86_400_000);
    expect(await s.db('outbox_cursors').where({ consumer: 'stats-conversions' }).first('pass_last_id', 'pass_parts_done', 'pass_digest')).toEqual({ pass_last_id: null, pass_parts_done: 0, pass_digest: null });
  });
});

describe(`[${dbKind}] recent and settled rollup rows`, () => {
  const HOUR = 3_600_000;
  /** Program 779's rows of one table, as [span, bucket, clicks], in key order. */
  const rows = async (table: string) =>
    (await s.db(table).where({ program_id: 779, dim: '', partner_id: 0, link_id: 0 }).orderBy(['span', 'bucket']).select('span', 'bucket', 'clicks')).map((r: { span: number; bucket: number; clicks: number }) => [Number(r.span), Number(r.bucket), Number(r.clicks)]);
  const clicksAt = (at: number, clicks: number) => {
    const set = new RollupSet();
    set.add({ programId: 779, partnerId: null, linkId: null, dims: null, currency: '', at, counters: { clicks } });
    return set;
  };

  it('the stats API answers the same before and after the ended buckets move, and no recent row of them is left', async () => {
    at('2026-04-07T10:20:00Z');
    const landing = 'https://acme.test/?utm_source=podcast';
    const id = (await s.post(CLICK, { affiliate_url: `${landing}&aff=pat20`, page_url: landing }, { 'cf-ipcountry': 'FR' })).body.click_id as string;
    await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' }, { 'cf-ipcountry': 'FR' });
    await serverLead(s, id, 'cust-recent-1');
    expect((await sale(s, { transaction_id: `recent-${dbKind}`, customer_key: 'cust-recent-1', amount_cents: 1250, currency: 'USD' })).status).toBe(200);
    const queries = ['from=2026-04-07&to=2026-04-07&group_by=country', 'from=2026-04-01&to=2026-04-30&group_by=partner', 'from=2026-04-07T10:00:00Z&to=2026-04-07T11:00:00Z&interval=hour', 'from=2026-01-01&to=2026-12-31&interval=month&group_by=utm_source', 'from=2026-04-07&to=2026-04-07&tz=America/New_York'];
    const before = [];
    for (const q of queries) before.push((await stats(q)).body.data);
    expect(before[0].totals).toMatchObject({ clicks: 2, leads: 1, sales: 1 });
    await settleEndedRollups(s.db, Date.UTC(2026, 5, 1));
    const april = (q: Knex.QueryBuilder) => q.where({ program_id: 1 }).where('bucket', '>=', Date.UTC(2026, 3, 1) / HOUR).where('bucket', '<', Date.UTC(2026, 4, 1) / HOUR);
    expect(Number((await april(s.db(RECENT)).count({ n: '*' }))[0].n)).toBe(0);
    expect(Number((await april(s.db(SETTLED)).count({ n: '*' }))[0].n)).toBeGreaterThan(0);
    for (const [i, q] of queries.entries()) expect((await stats(q)).body.data, q).toEqual(before[i]);
  });

  it('a recent row is an hour; once the hour ends it adds to the settled rows of its hour, day and month', async () => {
    const t = Date.UTC(2020, 0, 10, 5, 30);
    await upsertRollups(s.db, clicksAt(t, 2));
    await settleEndedRollups(s.db, t + HOUR / 4);
    const hour = Math.floor(t / HOUR);
    const day = hour - (hour % 24);
    const month = Date.UTC(2020, 0, 1) / HOUR;
    expect(await rows(RECENT)).toEqual([[1, hour, 2]]);
    expect(await rows(SETTLED)).toEqual([]);
    await settleEndedRollups(s.db, t + 2 * HOUR);
    expect(await rows(RECENT)).toEqual([]);
    expect(await rows(SETTLED)).toEqual([[1, hour, 2], [24, day, 2], [720, month, 2]]);
    // The next hour of the same day and month: its recent row, then added to the same day and month.
    await upsertRollups(s.db, clicksAt(t + HOUR, 4));
    await settleEndedRollups(s.db, t + 3 * HOUR);
    expect(await rows(SETTLED)).toEqual([[1, hour, 2], [1, hour + 1, 4], [24, day, 6], [720, month, 6]]);
    // A late increment of the first hour: a recent row again, added to the settled rows when moved.
    await upsertRollups(s.db, clicksAt(t, 3));
    await settleEndedRollups(s.db, Date.UTC(2020, 1, 1));
    expect(await rows(RECENT)).toEqual([]);
    expect(await rows(SETTLED)).toEqual([[1, hour, 5], [1, hour + 1, 4], [24, day, 9], [720, month, 9]]);
    await s.db(SETTLED).where({ program_id: 779 }).del();
  });

  it('the stats API counts a recent hour in its day and month, and a day or month row left recent by the release before once', async () => {
    at('2019-05-31T23:20:00Z');
    const landing = 'https://acme.test/?utm_source=newsletter';
    await s.post(CLICK, { affiliate_url: `${landing}&aff=pat20`, page_url: landing }, { 'cf-ipcountry': 'DE' });
    const queries = ['from=2019-05-31&to=2019-05-31&group_by=country', 'from=2019-05-01&to=2019-05-31&interval=month', 'from=2019-05-31T23:00:00Z&to=2019-06-01T00:00:00Z&interval=hour', 'from=2019-01-01&to=2019-12-31&interval=month&group_by=utm_source', 'from=2019-05-31&to=2019-05-31&tz=America/New_York'];
    const before = [];
    for (const q of queries) before.push((await stats(q)).body.data);
    expect(before[0].totals).toMatchObject({ clicks: 1 });
    expect(before[1].series).toEqual([expect.objectContaining({ start: '2019-05-01T00:00:00Z', clicks: 1 })]);
    expect(before[3].breakdown.rows).toEqual([expect.objectContaining({ key: 'newsletter', clicks: 1 })]);
    // Only hours are recent (the stats thread's settler, on the wall clock, may have moved this one already).
    const may = (q: Knex.QueryBuilder) => q.where({ program_id: 1 }).where('bucket', '>=', Date.UTC(2019, 4, 1) / HOUR).where('bucket', '<', Date.UTC(2019, 5, 1) / HOUR);
    const spans = await may(s.db(RECENT)).distinct('span');
    expect(spans.filter((r: { span: number }) => Number(r.span) !== 1)).toEqual([]);
    // A recent day row of the program, as the release before wrote them: counted once, and moved as it is.
    const key = { program_id: 1, dim: '', partner_id: 0, link_id: 0, value: '', currency: '' };
    await s.db(RECENT).insert({ ...key, span: 24, bucket: Date.UTC(2019, 4, 31) / HOUR, clicks: 10 });
    expect((await stats(queries[0])).body.data.totals.clicks).toBe(11);
    await settleEndedRollups(s.db, Date.UTC(2019, 5, 1, 1));
    expect(Number((await may(s.db(RECENT)).count({ n: '*' }))[0].n)).toBe(0);
    expect((await stats(queries[0])).body.data.totals.clicks).toBe(11);
    await s.db(SETTLED).where({ ...key, span: 24, bucket: Date.UTC(2019, 4, 31) / HOUR }).decrement('clicks', 10);
    for (const [i, q] of queries.entries()) expect((await stats(q)).body.data, q).toEqual(before[i]);
  });

  it('increments written while moves run are each counted once', async () => {
    const t = Date.UTC(2020, 2, 3, 4);
    const rounds = 25;
    // Consumers' passes and moves at once (concurrent on PostgreSQL, in turn for SQLite's write lock).
    await Promise.all(
      Array.from({ length: rounds }, (_, i) => [s.db.transaction((trx) => upsertRollups(trx, clicksAt(t + i * 1000, 1))), settleEndedRollups(s.db, Date.UTC(2020, 4, 1))]).flat(),
    );
    await settleEndedRollups(s.db, Date.UTC(2020, 4, 1));
    const hour = Math.floor(t / HOUR);
    expect(await rows(RECENT)).toEqual([]);
    expect(await rows(SETTLED)).toEqual([[1, hour, rounds], [24, hour - (hour % 24), rounds], [720, Date.UTC(2020, 2, 1) / HOUR, rounds]]);
    await s.db(SETTLED).where({ program_id: 779 }).del();
  });
});

describe(`[${dbKind}] rollup writes at scale`, () => {
  it('an upsert of more rows than one statement holds adds every increment (SQLite caps a compound SELECT at 500 terms)', async () => {
    const set = new RollupSet();
    // 400 links × 3 spans × (link row + program row): 1,203 distinct rows, three statements.
    for (let link = 1; link <= 400; link++) set.add({ programId: 777, partnerId: 1, linkId: 100_000 + link, dims: null, currency: '', at: Date.UTC(2020, 0, 1, 5), counters: { clicks: 2 } });
    expect(set.sorted().length).toBeGreaterThan(1_000);
    await upsertRollups(s.db, set);
    await upsertRollups(s.db, set);
    const [row] = await s.db(RECENT).where({ program_id: 777, span: 1 }).where('link_id', '>', 0).count({ n: '*' }).sum({ clicks: 'clicks' });
    expect(Number(row.n)).toBe(400);
    expect(Number(row.clicks)).toBe(1_600);
    await s.db(RECENT).where({ program_id: 777 }).del();
  });

  /** `leads` leads on each of 3,000 links of program 778: 3,008 distinct recent rows (hours only: 3,000 link rows, the program row, seven dimension rows). */
  const leadsOnLinks = (leads: number): RollupSet => {
    const set = new RollupSet();
    for (let link = 1; link <= 3000; link++) for (let n = 0; n < leads; n++) set.add({ programId: 778, partnerId: 1, linkId: 200_000 + link, dims: ['US', 'desktop', 'Chrome', 'example.com', 'news', 'cpc', 'spring'], currency: '', at: Date.UTC(2020, 0, 1, 5), counters: { leads: 1 } });
    return set;
  };

  it('a stats pass writes its rows in parts of 2,048 on SQLite (one on PostgreSQL), and prepares the same parts and digest from the same events', () => {
    const once = rollupWrites(s.db, leadsOnLinks(1));
    expect(once.parts.length).toBe(dbKind === 'sqlite' ? 2 : 1);
    expect(rollupWrites(s.db, leadsOnLinks(1)).digest).toBe(once.digest);
    expect(once.digest.startsWith('3008:')).toBe(true);
    // Twice the leads: the same rows, other counts — another digest.
    expect(rollupWrites(s.db, leadsOnLinks(2)).digest).not.toBe(once.digest);
  });

  it('dimension values that hold the key separator are never summed with other values', () => {
    const set = new RollupSet();
    const at = Date.UTC(2020, 0, 1, 5);
    const rest = ['', '', '', '', ''];
    set.add({ programId: 779, partnerId: null, linkId: null, dims: ['a\u0000b', 'c', ...rest], currency: '', at, counters: { clicks: 1 } });
    set.add({ programId: 779, partnerId: null, linkId: null, dims: ['a', 'b\u0000c', ...rest], currency: '', at, counters: { clicks: 2 } });
    set.add({ programId: 779, partnerId: null, linkId: null, dims: ['x\u0000USD', ...rest, ''], currency: '', at, counters: { clicks: 4 } });
    set.add({ programId: 779, partnerId: null, linkId: null, dims: ['x', ...rest, ''], currency: 'USD', at, counters: { sales: 1 } });
    const hourly = set.sorted().filter((r) => r.span === 1 && r.dim === STATS_DIMENSIONS[0]);
    expect(hourly.map((r) => [r.value, r.currency, r.counters.clicks, r.counters.sales])).toEqual([
      ['a', '', 2, 0],
      ['a\u0000b', '', 1, 0],
      ['x', 'USD', 0, 1],
      ['x\u0000USD', '', 4, 0],
    ]);
  });

  it('written part by part, each in its own transaction, a pass adds every increment once', async () => {
    const { parts } = rollupWrites(s.db, leadsOnLinks(2));
    for (const part of parts) await s.db.transaction((trx) => part(trx));
    const byLevel = await s.db(RECENT).where({ program_id: 778, link_id: 0 }).groupBy('span', 'dim').select('span', 'dim').sum({ leads: 'leads' }).orderBy(['span', 'dim']);
    // The program's hourly row and each dimension's count the 6,000 leads once; so do the link rows together.
    expect(byLevel.map((r: { span?: unknown; leads?: unknown }) => [Number(r.span), Number(r.leads)])).toEqual(Array(8).fill([1, 6000]));
    const [links] = await s.db(RECENT).where({ program_id: 778 }).where('link_id', '>', 0).count({ n: '*' }).sum({ leads: 'leads' });
    expect([Number(links.n), Number(links.leads)]).toEqual([3000, 6000]);
    await s.db(RECENT).where({ program_id: 778 }).del();
  });

  it('the unique-click window remembers a visitor across a generation swap, and forgets only the oldest past the bound', () => {
    const window = new UniqueClickWindow(86_400_000);
    expect(window.countOnce(1, [{ clickId: 'first' }], 1_000)).toBe(true);
    // 100,000 other visitors: the first one's sighting moves to the older generation and is kept.
    for (let i = 0; i < 100_000; i++) window.countOnce(1, [{ clickId: `v${i}` }], 2_000);
    expect(window.countOnce(1, [{ clickId: 'first' }], 3_000)).toBe(false);
    // 100,000 more: the generation holding the first sighting is dropped whole.
    for (let i = 0; i < 100_000; i++) window.countOnce(1, [{ clickId: `w${i}` }], 4_000);
    expect(window.countOnce(1, [{ clickId: 'first' }], 5_000)).toBe(true);
  });
});
