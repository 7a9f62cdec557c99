/**
 * Clicks, leads and sales per day, counted from the event listing (4.6). The listing reads at most
 * 3 × pageSize rows of one type per request window, so a range that fills the window may hold more:
 * such a range is split in halves until each part fits, down to a single day (then shown as "at
 * least"). A request budget, shared equally by the three types so a busy one cannot starve the
 * others, bounds the work; past it, the counts are marked partial.
 */
import { LIMITS, type EventType } from '@reftrack/contract';
import { addDays, daysBetween } from './format.js';

export const CHART_TYPES: readonly EventType[] = ['click', 'lead', 'conversion'];
export const CHART_PAGE_SIZE = LIMITS.eventListingMaxPageSize;
const WINDOW = LIMITS.eventListingWindowMultiplier * CHART_PAGE_SIZE;

export interface PageQuery {
  eventType: EventType;
  dateFrom: string;
  dateTo: string;
  page: number;
  pageSize: number;
}

export interface PageResult {
  timestamps: string[];
  total: number;
  pageCount: number;
}

export type FetchPage = (q: PageQuery) => Promise<PageResult>;

export interface DailySeries {
  days: string[];
  counts: Record<EventType, number[]>;
  /** true where a single day filled the window: its count is a lower bound */
  atLeast: Record<EventType, boolean[]>;
  /** the request budget ran out: older days may be under-counted */
  partial: boolean;
  requests: number;
}

export function dayList(from: string, to: string): string[] {
  const n = daysBetween(from, to);
  return Array.from({ length: Math.max(0, n + 1) }, (_, i) => addDays(from, i));
}

export async function collectDaily(fetchPage: FetchPage, from: string, to: string, budget = 40): Promise<DailySeries> {
  const days = dayList(from, to);
  const index = new Map(days.map((d, i) => [d, i]));
  const counts = Object.fromEntries(CHART_TYPES.map((t) => [t, days.map(() => 0)])) as Record<EventType, number[]>;
  const atLeast = Object.fromEntries(CHART_TYPES.map((t) => [t, days.map(() => false)])) as Record<EventType, boolean[]>;
  const perType = Math.max(1, Math.floor(budget / CHART_TYPES.length));
  const used: Record<EventType, number> = { click: 0, lead: 0, conversion: 0 };
  let partial = false;

  const add = (type: EventType, timestamps: string[]) => {
    for (const ts of timestamps) {
      const i = index.get(ts.slice(0, 10));
      if (i !== undefined) counts[type][i] += 1;
    }
  };
  const fetchOne = async (q: PageQuery) => {
    used[q.eventType] += 1;
    return fetchPage(q);
  };

  const range = async (type: EventType, a: string, b: string): Promise<void> => {
    const first = await fetchOne({ eventType: type, dateFrom: a, dateTo: b, page: 1, pageSize: CHART_PAGE_SIZE });
    if (first.total < WINDOW) {
      add(type, first.timestamps);
      for (let page = 2; page <= first.pageCount; page++) {
        if (used[type] >= perType) {
          partial = true;
          return;
        }
        add(type, (await fetchOne({ eventType: type, dateFrom: a, dateTo: b, page, pageSize: CHART_PAGE_SIZE })).timestamps);
      }
      return;
    }
    if (a === b) {
      const i = index.get(a);
      if (i !== undefined) {
        counts[type][i] = first.total;
        atLeast[type][i] = true;
      }
      return;
    }
    if (used[type] + 2 > perType) {
      // No room to split: keep the newest page's rows and say the rest is incomplete.
      add(type, first.timestamps);
      partial = true;
      return;
    }
    const mid = addDays(a, Math.floor(daysBetween(a, b) / 2));
    // Newest half first: if the budget runs out, the recent days are the exact ones.
    await range(type, addDays(mid, 1), b);
    await range(type, a, mid);
  };

  for (const type of CHART_TYPES) await range(type, from, to);
  return { days, counts, atLeast, partial, requests: used.click + used.lead + used.conversion };
}

/** A round axis maximum and tick step for counts up to `max`. */
export function niceScale(max: number, ticks = 4): { max: number; step: number } {
  if (max <= 0) return { max: ticks, step: 1 };
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const stepInt = Math.max(1, Math.ceil(step));
  return { max: Math.ceil(max / stepInt) * stepInt, step: stepInt };
}
