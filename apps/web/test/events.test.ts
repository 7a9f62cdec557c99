import { describe, expect, it } from 'vitest';
import { chartRange, endNote, filtersFromQuery, queryFromFilters } from '../src/pages/events.js';
import { trackerSnippet } from '../src/pages/readiness.js';
import { match } from '../src/lib/router.js';

describe('event filters in the address', () => {
  it('reads and writes the query, dropping defaults and junk', () => {
    const f = filtersFromQuery(new URLSearchParams('type=lead&from=2026-03-01&to=bad&page=2&size=25&bots=only'));
    expect(f).toEqual({ type: 'lead', from: '2026-03-01', to: '', page: 2, size: 25, bots: 'only' });
    expect(queryFromFilters(f)).toBe('?type=lead&from=2026-03-01&page=2&size=25&bots=only');
    expect(filtersFromQuery(new URLSearchParams('type=sale&page=-1&size=7&bots=maybe'))).toEqual({ type: '', from: '', to: '', page: 1, size: 10, bots: '' });
    expect(queryFromFilters({ type: '', from: '', to: '', page: 1, size: 10, bots: '' })).toBe('');
  });
});

describe('the end of the listing', () => {
  const f = { type: 'click' as const, from: '', to: '', page: 3, size: 10, bots: '' as const };
  it('explains the 3 × page size window when the listing is full', () => {
    expect(endNote(f, 10, { page: 3, pageCount: 3, total: 30 })).toContain('newest 30 events of each type (3 × page size of 10)');
  });
  it('says nothing before the end', () => {
    expect(endNote({ ...f, page: 2 }, 10, { page: 2, pageCount: 3, total: 30 })).toBeNull();
  });
  it('is plain when everything fits', () => {
    expect(endNote({ ...f, page: 1 }, 4, { page: 1, pageCount: 1, total: 4 })).toBe('End of the listing (4 events).');
    expect(endNote({ ...f, page: 1 }, 0, { page: 1, pageCount: 0, total: 0 })).toBe('No events match these filters.');
  });
  it('explains an empty page past the end', () => {
    expect(endNote({ ...f, page: 7 }, 0, { page: 7, pageCount: 3, total: 30 })).toMatch(/^This page is past the end: the listing holds 30 events/);
  });
});

describe('chart range', () => {
  it('defaults to the last 14 days and clips long ranges', () => {
    expect(chartRange({ from: '', to: '' }, '2026-03-14')).toEqual({ from: '2026-03-01', to: '2026-03-14', clipped: false });
    expect(chartRange({ from: '2025-01-01', to: '2026-03-14' }, '2026-03-14')).toEqual({ from: '2025-12-13', to: '2026-03-14', clipped: true });
    expect(chartRange({ from: '2026-03-02', to: '' }, '2026-03-14')).toEqual({ from: '2026-03-02', to: '2026-03-14', clipped: false });
  });
});

describe('router and snippet', () => {
  it('matches program routes', () => {
    expect(match('/programs/:id/:tab?', '/programs/4/events')).toEqual({ id: '4', tab: 'events' });
    expect(match('/programs/:id/:tab?', '/programs/4')).toEqual({ id: '4' });
    expect(match('/programs/:id/:tab?', '/programs/4/events/x')).toBeNull();
    expect(match('/programs', '/programs/')).toEqual({});
  });
  it('writes the tracker tag', () => {
    expect(trackerSnippet('https://t.example', 7)).toBe('<script src="https://t.example/tracker.js" data-reftrack-program-id="7" defer></script>');
  });
});

describe('the stats panel', () => {
  it('writes what is on screen as CSV: amounts as minor units with their currency, formula-looking text quoted', async () => {
    const { breakdownCsv, seriesCsv, presetRange, statsQuery, percent } = await import('../src/lib/stats-view.js');
    const metrics = { clicks: 3, unique_clicks: 2, bot_clicks: 1, leads: 1, sales: 1, revenue: [{ currency: 'USD' as const, amount_cents: 5000 }, { currency: 'EUR' as const, amount_cents: 700 }], refunds: 0, refunded: [] };
    const report = {
      program_id: 1, from: '2026-03-10T00:00:00.000Z', to: '2026-03-11T00:00:00.000Z', interval: 'day' as const, time_zone: 'UTC',
      filters: { partner_id: null, link_id: null, dimension: null }, totals: metrics, conversion: { click_to_lead: 0.5, lead_to_sale: 1, click_to_sale: 0.5 },
      series: [{ start: '2026-03-10T00:00:00Z', ...metrics }],
      breakdown: { group_by: 'utm_source' as const, rows: [{ key: '=cmd', label: '=cmd', ...metrics }] },
    };
    expect(seriesCsv(report)).toBe('start,clicks,unique_clicks,bot_clicks,leads,sales,revenue_minor,refunds,refunded_minor\r\n2026-03-10T00:00:00Z,3,2,1,1,1,5000 USD 700 EUR,0,\r\n');
    expect(breakdownCsv(report)).toBe("utm_source,label,clicks,unique_clicks,bot_clicks,leads,sales,revenue_minor,refunds,refunded_minor\r\n'=cmd,'=cmd,3,2,1,1,1,5000 USD 700 EUR,0,\r\n");
    expect(presetRange(7, '2026-03-14')).toEqual({ from: '2026-03-08', to: '2026-03-14' });
    expect(statsQuery({ from: '2026-03-08', to: '2026-03-14', interval: 'day', groupBy: 'country' }, 'Europe/Paris')).toBe('from=2026-03-08&to=2026-03-14&interval=day&tz=Europe%2FParis&group_by=country');
    expect([percent(0.3333), percent(null)]).toEqual(['33.3%', '—']);
  });
});
