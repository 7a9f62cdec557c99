/** The stats API's query string (docs/analytics.md "The stats API"), validated into a typed value. */
import { ERRORS, STATS_DIMENSIONS, STATS_GROUP_BY, STATS_INTERVALS, STATS_LIMITS, type StatsDimension, type StatsGroupBy, type StatsInterval } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { HOUR_MS, isTimeZone, localMidnight } from './stats-time.js';

export interface StatsQuery {
  /** Whole UTC hours since the epoch: [fromHour, toHour). */
  fromHour: number;
  toHour: number;
  interval: StatsInterval;
  timeZone: string;
  groupBy: StatsGroupBy | null;
  partnerId: number | null;
  linkId: number | null;
  dimension: { name: StatsDimension; value: string } | null;
}

const DAY_MS = 24 * HOUR_MS;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

type Query = Record<string, string | string[] | undefined>;

function single(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[value.length - 1] : value;
  return v === '' ? undefined : v;
}

/** A date (local midnight in the zone; `to` includes that whole day) or a time with its offset. */
function parseInstant(value: string, timeZone: string, end: boolean): number | undefined {
  if (DATE_ONLY.test(value)) {
    const t = Date.parse(`${value}T00:00:00Z`);
    if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== value) return undefined;
    const next = new Date(t + DAY_MS).toISOString().slice(0, 10);
    return localMidnight(timeZone, end ? next : value);
  }
  if (!DATE_TIME.test(value)) return undefined;
  const t = Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  return Number.isNaN(t) ? undefined : t;
}

function positiveId(value: string | undefined, error: (typeof ERRORS)[keyof typeof ERRORS]): number | null {
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value) || Number(value) < 1 || Number(value) > Number.MAX_SAFE_INTEGER) fail(error);
  return Number(value);
}

/**
 * Defaults: the last 30 days to the end of the current hour, by day, in UTC. `now` is the server's
 * clock.
 */
export function parseStatsQuery(query: Query, now: number): StatsQuery {
  const timeZone = single(query.tz) ?? 'UTC';
  if (!isTimeZone(timeZone)) fail(ERRORS.statsTimeZoneInvalid);
  const interval = (single(query.interval) ?? 'day') as StatsInterval;
  if (!(STATS_INTERVALS as readonly string[]).includes(interval)) fail(ERRORS.statsIntervalInvalid);
  const rawTo = single(query.to);
  const rawFrom = single(query.from);
  // By default up to the end of the current hour.
  const to = rawTo === undefined ? (Math.floor(now / HOUR_MS) + 1) * HOUR_MS : parseInstant(rawTo, timeZone, true);
  if (to === undefined) fail(ERRORS.statsToInvalid);
  const from = rawFrom === undefined ? to - 30 * DAY_MS : parseInstant(rawFrom, timeZone, false);
  if (from === undefined) fail(ERRORS.statsFromInvalid);
  if (to <= from) fail(ERRORS.statsRangeInvalid);
  // Both ends rounded down to the UTC hour, the rollups' grain (so a half-hour zone's local
  // midnights land where its buckets begin; docs/analytics.md "Time zones").
  const fromHour = Math.floor(from / HOUR_MS);
  const toHour = Math.max(Math.floor(to / HOUR_MS), fromHour + 1);
  if ( toHour - fromHour > STATS_LIMITS.rangeMaxDays * 24) fail(ERRORS.statsRangeInvalid);
  if (interval === 'hour' && toHour - fromHour > STATS_LIMITS.hourRangeMaxDays * 24) fail(ERRORS.statsHourRangeTooLong);
  const rawGroup = single(query.group_by);
  if (rawGroup !== undefined && !(STATS_GROUP_BY as readonly string[]).includes(rawGroup)) fail(ERRORS.statsGroupByInvalid);
  const groupBy = (rawGroup as StatsGroupBy | undefined) ?? null;
  const partnerId = positiveId(single(query.partner_id), ERRORS.statsPartnerInvalid);
  const linkId = positiveId(single(query.link_id), ERRORS.statsLinkInvalid);
  const dimensions = STATS_DIMENSIONS.flatMap((name) => {
    const raw = query[name];
    if (raw === undefined) return [];
    return [{ name, value: (Array.isArray(raw) ? raw[raw.length - 1] : raw).slice(0, STATS_LIMITS.dimensionValueMaxLength) }];
  });
  // Dimensions are rolled up for the whole program, not per partner or link (docs/analytics.md).
  if (dimensions.length > 1 || (dimensions.length === 1 && (partnerId !== null || linkId !== null))) fail(ERRORS.statsFilterInvalid, { dimensions: STATS_DIMENSIONS.join(', ') });
  const dimension = dimensions[0] ?? null;
  if (groupBy !== null) {
    const isDimension = groupBy !== 'partner' && groupBy !== 'link';
    if (isDimension && (partnerId !== null || linkId !== null)) fail(ERRORS.statsCombinationUnsupported, { group_by: groupBy, filter: partnerId !== null ? 'partner_id' : 'link_id' });
    if (dimension && (!isDimension || dimension.name !== groupBy)) fail(ERRORS.statsCombinationUnsupported, { group_by: groupBy, filter: dimension.name });
  }
  return { fromHour, toHour, interval, timeZone, groupBy, partnerId, linkId, dimension };
}
