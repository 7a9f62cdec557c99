/**
 * Time zones for the stats API (docs/analytics.md "Time zones"). Rollups are kept per UTC hour, so
 * a day or a month of any time zone whose offset is a whole number of hours is an exact sum of
 * hours, across daylight-saving changes too. For a zone with a half-hour or 45-minute offset
 * (Asia/Kolkata, Australia/Adelaide, Asia/Kathmandu) each bucket boundary is rounded down to the
 * UTC hour: a local day then starts 30 or 45 minutes early.
 */
import type { StatsInterval } from '@reftrack/contract';

export const HOUR_MS = 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** True for a time zone this runtime knows (IANA names, and UTC). */
export function isTimeZone(value: string): boolean {
  if (value.length > 64) return false;
  try {
    formatter(value);
    return true;
  } catch {
    return false;
  }
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
}

function localParts(timeZone: string, at: number): LocalTime & { minute: number; second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(at))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute, second: parts.second };
}

/** The zone's offset from UTC at an instant, in milliseconds (east positive). */
export function offsetAt(timeZone: string, at: number): number {
  const l = localParts(timeZone, at);
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** The instant a local wall-clock time occurs (the later offset when it is ambiguous or skipped). */
export function zonedInstant(timeZone: string, t: LocalTime): number {
  const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour);
  let at = wall - offsetAt(timeZone, wall);
  at = wall - offsetAt(timeZone, at);
  return at;
}

/** The start of the bucket (hour, day or month in the zone) that holds `at`. */
export function bucketStart(timeZone: string, interval: StatsInterval, at: number): number {
  if (interval === 'hour') return Math.floor(at / HOUR_MS) * HOUR_MS;
  const l = localParts(timeZone, at);
  return zonedInstant(timeZone, { year: l.year, month: l.month, day: interval === 'month' ? 1 : l.day, hour: 0 });
}

/** The start of the bucket after the one starting at `start`. */
export function nextBucket(timeZone: string, interval: StatsInterval, start: number): number {
  if (interval === 'hour') return start + HOUR_MS;
  // Noon of the start's local day, so a daylight-saving change never lands on another day.
  const l = localParts(timeZone, start + 12 * HOUR_MS);
  if (interval === 'day') return zonedInstant(timeZone, { ...nextDay(l), hour: 0 });
  return zonedInstant(timeZone, { year: l.month === 12 ? l.year + 1 : l.year, month: l.month === 12 ? 1 : l.month + 1, day: 1, hour: 0 });
}

function nextDay(l: LocalTime): LocalTime {
  const d = new Date(Date.UTC(l.year, l.month - 1, l.day + 1));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0 };
}

/** Local midnight starting the given local date (YYYY-MM-DD) in the zone. */
export function localMidnight(timeZone: string, date: string): number {
  const [year, month, day] = date.split('-').map(Number);
  return zonedInstant(timeZone, { year, month, day, hour: 0 });
}

/** The instant as ISO 8601 with the zone's offset at that instant (2026-03-29T00:00:00+01:00). */
export function isoInZone(timeZone: string, at: number): string {
  const offset = offsetAt(timeZone, at);
  const local = new Date(at + offset).toISOString().slice(0, 19);
  if (offset === 0) return `${local}Z`;
  const sign = offset < 0 ? '-' : '+';
  const minutes = Math.abs(offset) / 60_000;
  return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}
