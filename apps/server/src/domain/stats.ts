/**
 * The stats report (docs/analytics.md "The stats API"): totals, conversion rates, a series in the
 * caller's time zone and an optional breakdown, all read from the rollups. Shared by the
 * dashboard, the agent API and the partner portal (which fixes the partner filter to the partner).
 */
import type { Knex } from 'knex';
import { CURRENCIES, STATS_LIMITS, type Currency, type StatsAmount, type StatsBreakdownRow, type StatsBucket, type StatsMetrics, type StatsReport } from '@reftrack/contract';
import { linkPartner, readBreakdown, readLabels, readSeries, type GroupColumn, type SeriesSegment, type StatsLevel, type SumRow } from '../db/stats-read.js';
import type { StatsQuery } from './stats-query.js';
import { HOUR_MS, Zone } from './stats-time.js';

/** Metrics being summed: counts, and amounts per currency. */
class Acc {
  clicks = 0;
  unique_clicks = 0;
  bot_clicks = 0;
  leads = 0;
  sales = 0;
  refunds = 0;
  revenue = new Map<string, number>();
  refunded = new Map<string, number>();

  add(row: SumRow): void {
    this.clicks += row.clicks;
    this.unique_clicks += row.unique_clicks;
    this.bot_clicks += row.bot_clicks;
    this.leads += row.leads;
    this.sales += row.sales;
    this.refunds += row.refunds;
    if (row.currency !== '') {
      if (row.revenue_cents !== 0) this.revenue.set(row.currency, (this.revenue.get(row.currency) ?? 0) + row.revenue_cents);
      if (row.refunded_cents !== 0) this.refunded.set(row.currency, (this.refunded.get(row.currency) ?? 0) + row.refunded_cents);
    }
  }

  metrics(): StatsMetrics {
    return { clicks: this.clicks, unique_clicks: this.unique_clicks, bot_clicks: this.bot_clicks, leads: this.leads, sales: this.sales, revenue: amounts(this.revenue), refunds: this.refunds, refunded: amounts(this.refunded) };
  }
}

/** Amounts in the contract's currency order; never summed across currencies. */
function amounts(map: Map<string, number>): StatsAmount[] {
  // A day's corrections (stats-read.ts) can leave a currency at 0: not a revenue to show.
  return [...map].filter(([, amount]) => amount !== 0).sort(([a], [b]) => order(a) - order(b) || (a < b ? -1 : 1)).map(([currency, amount_cents]) => ({ currency: currency as Currency, amount_cents }));
}
const order = (c: string) => {
  const i = (CURRENCIES as readonly string[]).indexOf(c);
  return i < 0 ? CURRENCIES.length : i;
};

/** The bucket holding `hour`: the last start at or before it (the first bucket for earlier hours). */
function bucketIndex(startHours: number[], hour: number): number {
  let lo = 0;
  let hi = startHours.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (startHours[mid] <= hour) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * [fromHour, toHour) cut where the local day's start moves to another UTC hour (a daylight-saving
 * change), each piece with the shift that makes its local days start at multiples of 24 hours.
 */
function daySegments(zone: Zone, fromHour: number, toHour: number): SeriesSegment[] {
  const segments: SeriesSegment[] = [];
  const shiftOf = (dayStartHour: number) => (24 - (((dayStartHour % 24) + 24) % 24)) % 24;
  let day = zone.bucketStart('day', fromHour * HOUR_MS);
  let current: SeriesSegment = { from: fromHour, to: toHour, shift: shiftOf(Math.floor(day / HOUR_MS)) };
  for (;;) {
    day = zone.nextBucket('day', day);
    const hour = Math.floor(day / HOUR_MS);
    if (hour >= toHour) break;
    const shift = shiftOf(hour);
    if (shift !== current.shift) {
      segments.push({ ...current, to: hour });
      current = { from: hour, to: toHour, shift };
    }
  }
  segments.push(current);
  return segments;
}

const ratio = (a: number, b: number): number | null => (b === 0 ? null : Math.round((a / b) * 10_000) / 10_000);

function levelOf(query: StatsQuery, linkOwner: number | null): StatsLevel {
  if (query.dimension) return { kind: 'dimension', name: query.dimension.name, value: query.dimension.value };
  if (query.partnerId !== null || query.linkId !== null) return { kind: 'links', partnerId: query.partnerId ?? linkOwner, linkId: query.linkId };
  return { kind: 'program' };
}

/** The report of one program for a validated query. */
export async function statsReport(db: Knex, programId: number, query: StatsQuery): Promise<StatsReport> {
  // A link's rows are read within its partner's (the rollups' key order), when the link exists.
  const linkOwner = query.linkId !== null && query.partnerId === null ? await linkPartner(db, programId, query.linkId) : null;
  const level = levelOf(query, linkOwner);
  const from = query.fromHour * HOUR_MS;
  const to = query.toHour * HOUR_MS;

  // The buckets, and the segments of constant local-day start the database sums hours over.
  const zone = new Zone(query.timeZone, from, to);
  const starts: number[] = [];
  // Buckets begin on UTC hours (stats-time.ts: half-hour zones round down): the first is the one
  // whose hours hold the range's first hour.
  let first = zone.bucketStart(query.interval, from);
  const second = zone.nextBucket(query.interval, first);
  if (Math.floor(second / HOUR_MS) <= query.fromHour) first = second;
  for (let start = first; Math.floor(start / HOUR_MS) < query.toHour; start = zone.nextBucket(query.interval, start)) starts.push(start);
  const startHours = starts.map((s) => Math.floor(s / HOUR_MS));
  const segments: SeriesSegment[] = query.interval === 'hour' ? [{ from: query.fromHour, to: query.toHour, shift: null }] : daySegments(zone, query.fromHour, query.toHour);
  const rows = await readSeries(db, programId, level, segments, query.interval === 'month');
  const accs = starts.map(() => new Acc());
  const totals = new Acc();
  for (const row of rows) {
    accs[bucketIndex(startHours, Number(row.key))].add(row);
    totals.add(row);
  }
  const series: StatsBucket[] = starts.map((start, i) => ({ start: zone.iso(start), ...accs[i].metrics() }));

  let breakdown: StatsReport['breakdown'] = null;
  if (query.groupBy) {
    const column: GroupColumn = query.groupBy === 'partner' ? 'partner_id' : query.groupBy === 'link' ? 'link_id' : 'value';
    const groupLevel: StatsLevel = column === 'value' ? { kind: 'dimension', name: query.groupBy as Exclude<typeof query.groupBy, 'partner' | 'link'>, value: query.dimension?.value ?? null } : { kind: 'links', partnerId: query.partnerId ?? linkOwner, linkId: query.linkId };
    const rows = await readBreakdown(db, programId, groupLevel, column, query.fromHour, query.toHour);
    const groups = new Map<string, Acc>();
    for (const row of rows) {
      const key = String(row.key);
      let acc = groups.get(key);
      if (!acc) groups.set(key, (acc = new Acc()));
      acc.add(row);
    }
    const ranked = [...groups]
      .map(([key, acc]) => ({ key, m: acc.metrics() }))
      .sort((a, b) => b.m.clicks - a.m.clicks || b.m.sales - a.m.sales || b.m.leads - a.m.leads || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, STATS_LIMITS.breakdownMaxRows);
    const labels = column === 'value' ? new Map<number, string>() : await readLabels(db, programId, column, ranked.map((r) => Number(r.key)));
    breakdown = {
      group_by: query.groupBy,
      rows: ranked.map(({ key, m }): StatsBreakdownRow => ({ key, label: column === 'value' ? key || '(unknown)' : (labels.get(Number(key)) ?? `#${key}`), ...m })),
    };
  }

  const t = totals.metrics();
  return {
    program_id: programId,
    from: new Date(from).toISOString(),
    to: new Date(to).toISOString(),
    interval: query.interval,
    time_zone: query.timeZone,
    filters: { partner_id: query.partnerId, link_id: query.linkId, dimension: query.dimension },
    totals: t,
    conversion: { click_to_lead: ratio(t.leads, t.unique_clicks), lead_to_sale: ratio(t.sales, t.leads), click_to_sale: ratio(t.sales, t.unique_clicks) },
    series,
    breakdown,
  };
}
