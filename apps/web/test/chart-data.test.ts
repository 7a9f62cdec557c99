import { describe, expect, it } from 'vitest';
import type { EventType } from '@reftrack/contract';
import { collectDaily, dayList, niceScale, type PageQuery } from '../src/lib/chart-data.js';

/** A fake listing with the server's window rule: newest first, 3 × pageSize per type, then paginated. */
function fakeListing(events: Record<EventType, string[]>) {
  const calls: PageQuery[] = [];
  const fetchPage = async (q: PageQuery) => {
    calls.push(q);
    const inRange = events[q.eventType].filter((t) => t.slice(0, 10) >= q.dateFrom && t.slice(0, 10) <= q.dateTo).sort().reverse();
    const windowed = inRange.slice(0, 3 * q.pageSize);
    const start = (q.page - 1) * q.pageSize;
    return { timestamps: windowed.slice(start, start + q.pageSize), total: windowed.length, pageCount: Math.ceil(windowed.length / q.pageSize) };
  };
  return { calls, fetchPage };
}

const at = (day: string, n: number) => Array.from({ length: n }, (_, i) => `${day}T${String(i % 24).padStart(2, '0')}:00:00.000Z`);

describe('daily counts from the listing', () => {
  it('lists the days of a range', () => {
    expect(dayList('2026-02-27', '2026-03-02')).toEqual(['2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
  });

  it('counts a quiet range with one request per type', async () => {
    const { calls, fetchPage } = fakeListing({ click: [...at('2026-03-01', 3), ...at('2026-03-03', 2)], lead: at('2026-03-02', 1), conversion: [] });
    const s = await collectDaily(fetchPage, '2026-03-01', '2026-03-03');
    expect(s.counts).toEqual({ click: [3, 0, 2], lead: [0, 1, 0], conversion: [0, 0, 0] });
    expect(calls).toHaveLength(3);
    expect(s.partial).toBe(false);
  });

  it('pages through up to the window, then splits a range that fills it', async () => {
    const click = [...at('2026-03-01', 150), ...at('2026-03-02', 120), ...at('2026-03-03', 90), ...at('2026-03-04', 40)];
    const { fetchPage } = fakeListing({ click, lead: at('2026-03-04', 250), conversion: [] });
    const s = await collectDaily(fetchPage, '2026-03-01', '2026-03-04');
    expect(s.counts.click).toEqual([150, 120, 90, 40]);
    expect(s.counts.lead).toEqual([0, 0, 0, 250]);
    expect(s.atLeast.click.every((x) => !x)).toBe(true);
    expect(s.partial).toBe(false);
  });

  it('marks a single day that fills the window as "at least"', async () => {
    const { fetchPage } = fakeListing({ click: [...at('2026-03-01', 5), ...at('2026-03-02', 420)], lead: [], conversion: [] });
    const s = await collectDaily(fetchPage, '2026-03-01', '2026-03-02');
    expect(s.counts.click).toEqual([5, 300]);
    expect(s.atLeast.click).toEqual([false, true]);
  });

  it('stops at the request budget and says the counts are partial', async () => {
    const days = dayList('2026-01-01', '2026-01-31');
    const { calls, fetchPage } = fakeListing({ click: days.flatMap((d) => at(d, 40)), lead: [], conversion: [] });
    const s = await collectDaily(fetchPage, "2026-01-01", "2026-01-31", 6);
    expect(s.partial).toBe(true);
    expect(calls.length).toBeLessThanOrEqual(8);
    // The newest days are the exact ones.
    expect(s.counts.click[30]).toBe(40);
  });
});

describe('axis scale', () => {
  it('rounds up to a tidy maximum', () => {
    expect(niceScale(0)).toEqual({ max: 4, step: 1 });
    expect(niceScale(3)).toEqual({ max: 3, step: 1 });
    expect(niceScale(33)).toEqual({ max: 40, step: 10 });
    expect(niceScale(7)).toEqual({ max: 8, step: 2 });
  });
});
