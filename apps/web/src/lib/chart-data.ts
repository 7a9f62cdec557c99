/**
 * Clicks, leads and sales per day for the charts (components/chart.tsx): the series' shape, the days
 * of a range and the axis scale. The counts come from the stats API (docs/analytics.md) and, in the
 * portal, the per-link daily route.
 */
import type { EventType } from '@reftrack/contract';
import { addDays, daysBetween } from './format.js';

export const CHART_TYPES: readonly EventType[] = ['click', 'lead', 'conversion'];

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

/** A round axis maximum and tick step for counts up to `max`. */
export function niceScale(max: number, ticks = 4): { max: number; step: number } {
  if (max <= 0) return { max: ticks, step: 1 };
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  const stepInt = Math.max(1, Math.ceil(step));
  return { max: Math.ceil(max / stepInt) * stepInt, step: stepInt };
}
