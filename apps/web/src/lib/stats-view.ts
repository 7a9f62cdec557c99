/**
 * The dashboard's stats panel, its pure parts (docs/analytics.md): the range presets, the query
 * sent to GET /api/dashboard/programs/:id/stats, and the CSV of what the panel shows.
 */
import type { StatsAmount, StatsBreakdownRow, StatsBucket, StatsGroupBy, StatsInterval, StatsReport } from '@reftrack/contract';
import { addDays } from './format.js';

export const RANGE_PRESETS = [
  { id: '7d', label: 'Last 7 days', days: 7 },
  { id: '14d', label: 'Last 14 days', days: 14 },
  { id: '30d', label: 'Last 30 days', days: 30 },
  { id: '90d', label: 'Last 90 days', days: 90 },
  { id: '365d', label: 'Last 12 months', days: 365 },
] as const;

export const GROUP_LABELS: Record<StatsGroupBy, string> = {
  partner: 'Partner',
  link: 'Link',
  country: 'Country',
  device: 'Device',
  browser: 'Browser',
  referrer: 'Referrer domain',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
};

export const INTERVAL_LABELS: Record<StatsInterval, string> = { hour: 'Hour', day: 'Day', month: 'Month' };

export interface StatsChoice {
  from: string;
  to: string;
  interval: StatsInterval;
  groupBy: StatsGroupBy;
}

/** `YYYY-MM-DD` of today in a time zone. */
export function todayIn(timeZone: string, now = new Date()): string {
  // en-CA writes dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/** The last `days` days up to today, both included. */
export function presetRange(days: number, today: string): { from: string; to: string } {
  return { from: addDays(today, -(days - 1)), to: today };
}

/** The browser's time zone, or UTC when it has none. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

export function statsQuery(choice: StatsChoice, timeZone: string): string {
  return new URLSearchParams({ from: choice.from, to: choice.to, interval: choice.interval, tz: timeZone, group_by: choice.groupBy }).toString();
}

/** Amounts as one cell: `USD 12.34; EUR 5.00` in minor units' major form; never summed across currencies. */
export function amountsText(amounts: StatsAmount[], money: (minor: number, currency: string) => string): string {
  return amounts.length === 0 ? '—' : amounts.map((a) => money(a.amount_cents, a.currency)).join('; ');
}

/** A ratio as a percentage with one decimal, or an em dash. */
export function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${(ratio * 100).toFixed(1)}%`;
}

function csvCell(value: string | number): string {
  let s = String(value);
  // A spreadsheet would run a cell starting with = + - @ as a formula.
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const amountsCsv = (amounts: StatsAmount[]) => amounts.map((a) => `${a.amount_cents} ${a.currency}`).join(' ');
const METRIC_HEADERS = ['clicks', 'unique_clicks', 'bot_clicks', 'leads', 'sales', 'revenue_minor', 'refunds', 'refunded_minor'];
const metricCells = (m: StatsBucket | StatsBreakdownRow) => [m.clicks, m.unique_clicks, m.bot_clicks, m.leads, m.sales, amountsCsv(m.revenue), m.refunds, amountsCsv(m.refunded)];

/** The series on screen as CSV: one row per bucket (amounts as `minor CURRENCY`, space-separated). */
export function seriesCsv(report: StatsReport): string {
  const rows = [['start', ...METRIC_HEADERS], ...report.series.map((b) => [b.start, ...metricCells(b)])];
  return rows.map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** The breakdown on screen as CSV: one row per partner, link or value. */
export function breakdownCsv(report: StatsReport): string {
  const rows = report.breakdown ? report.breakdown.rows.map((r) => [r.key, r.label, ...metricCells(r)]) : [];
  return [[report.breakdown?.group_by ?? 'key', 'label', ...METRIC_HEADERS], ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
