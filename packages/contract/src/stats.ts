/**
 * The stats API (docs/analytics.md): clicks, unique clicks, leads, sales and revenue per currency,
 * as a time series and broken down by one dimension, read from rollups. Shown by the dashboard
 * (GET /api/dashboard/programs/:id/stats), the agent API (GET /api/agent/v1/programs/:id/stats)
 * and the partner portal (GET /api/portal/partners/:id/stats, the partner's own).
 */
import type { Currency } from './limits.js';

/** The click dimensions kept in the rollups, in the order the click batch computes them. */
export const STATS_DIMENSIONS = ['country', 'device', 'browser', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type StatsDimension = (typeof STATS_DIMENSIONS)[number];

/** What a breakdown can group by: the partner, the link, or a click dimension. */
export const STATS_GROUP_BY = ['partner', 'link', ...STATS_DIMENSIONS] as const;
export type StatsGroupBy = (typeof STATS_GROUP_BY)[number];

export const STATS_INTERVALS = ['hour', 'day', 'month'] as const;
export type StatsInterval = (typeof STATS_INTERVALS)[number];

export const STATS_LIMITS = {
  /** The longest range of an hourly series, in days. */
  hourRangeMaxDays: 31,
  /** The longest range of any series, in days (a little over two years). */
  rangeMaxDays: 732,
  /** Rows of a breakdown at most (the largest by clicks, then by sales). */
  breakdownMaxRows: 500,
  /** A dimension value is kept up to this many characters. */
  dimensionValueMaxLength: 255,
  /** The default unique-click window (UNIQUE_CLICK_WINDOW_MINUTES): a day. */
  uniqueClickWindowMinutesDefault: 1440,
} as const;

export interface StatsAmount {
  currency: Currency;
  amount_cents: number;
}

/** Counters of a bucket, a breakdown row or the whole range. Bot clicks are in none but `bot_clicks`. */
export interface StatsMetrics {
  clicks: number;
  unique_clicks: number;
  /** Clicks from known bots, crawlers and link-preview fetchers: recorded, counted nowhere else. */
  bot_clicks: number;
  leads: number;
  sales: number;
  /** Sales' amounts per currency, never summed across currencies. */
  revenue: StatsAmount[];
  refunds: number;
  refunded: StatsAmount[];
}

/** Ratios of the range's totals, or null when the divisor is 0. */
export interface StatsConversion {
  /** leads ÷ unique clicks */
  click_to_lead: number | null;
  /** sales ÷ leads */
  lead_to_sale: number | null;
  /** sales ÷ unique clicks */
  click_to_sale: number | null;
}

export interface StatsBucket extends StatsMetrics {
  /** The bucket's start, ISO 8601 with the time zone's offset at that instant. */
  start: string;
}

export interface StatsBreakdownRow extends StatsMetrics {
  /** The partner's or link's id, or the dimension's value ('' when unknown). */
  key: string;
  /** What to show: the partner's name, the link's short link, the value, or "(unknown)". */
  label: string;
}

export interface StatsFilters {
  partner_id: number | null;
  link_id: number | null;
  /** One dimension's value (country=US): at most one dimension filter per query. */
  dimension: { name: StatsDimension; value: string } | null;
}

export interface StatsReport {
  program_id: number;
  /** Inclusive start and exclusive end, whole hours, ISO 8601 (UTC). */
  from: string;
  to: string;
  interval: StatsInterval;
  time_zone: string;
  filters: StatsFilters;
  totals: StatsMetrics;
  conversion: StatsConversion;
  series: StatsBucket[];
  breakdown: { group_by: StatsGroupBy; rows: StatsBreakdownRow[] } | null;
}

export interface StatsResponse {
  success: true;
  data: StatsReport;
}
