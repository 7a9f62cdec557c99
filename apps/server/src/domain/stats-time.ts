/**
 * Time zones for the stats API (docs/analytics.md "Time zones"). Rollups are kept per UTC hour, so
 * a day or a month of any time zone whose offset is a whole number of hours is an exact sum of
 * hours, across daylight-saving changes too. For a zone with a half-hour or 45-minute offset
 * (Asia/Kolkata, Australia/Adelaide, Asia/Kathmandu) each bucket boundary is rounded down to the
 * UTC hour: a local day then starts 30 or 45 minutes early.
 *
 * A Zone knows its offsets over a range from a few dozen Intl calls (a sample a week, and a binary
 * search where two samples differ): a year's 365 local midnights are then plain arithmetic.
 */
import type { StatsInterval } from '@reftrack/contract';

export const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;
const SAMPLE_MS = 7 * 24 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    if (formatters.size > 500) formatters.clear();
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

/** The zone's offset from UTC at an instant, in milliseconds (east positive), from Intl. */
function intlOffset(timeZone: string, at: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(at))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const asUtc = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** Zones that are UTC all year: no Intl call (the default and the most common). */
const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT', 'Etc/Universal', 'Etc/Zulu', 'Universal', 'Zulu']);

interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
}

/** A time zone over a range of instants. */
export class Zone {
  /** Instants where the offset changes (ascending), and the offset from each on. */
  private readonly changes: number[] = [];
  private readonly offsets: number[] = [];

  constructor(
    readonly name: string,
    from: number,
    to: number,
  ) {
    if (UTC_NAMES.has(name)) {
      this.changes.push(-Infinity);
      this.offsets.push(0);
      return;
    }
    // A margin either side: local midnights before the range's start and after its end are asked for.
    let at = from - 3 * SAMPLE_MS;
    const end = to + 3 * SAMPLE_MS;
    let offset = intlOffset(name, at);
    this.changes.push(-Infinity);
    this.offsets.push(offset);
    while (at < end) {
      const next = Math.min(at + SAMPLE_MS, end);
      const nextOffset = intlOffset(name, next);
      if (nextOffset !== offset) {
        // The change lies in (at, next]: found to the minute (every real change is on a minute).
        let lo = at;
        let hi = next;
        while (hi - lo > MINUTE_MS) {
          const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
          if (intlOffset(name, mid) === offset) lo = mid;
          else hi = mid;
        }
        this.changes.push(hi);
        this.offsets.push(nextOffset);
        offset = nextOffset;
      }
      at = next;
    }
  }

  offsetAt(at: number): number {
    let i = this.changes.length - 1;
    while (i > 0 && this.changes[i] > at) i--;
    return this.offsets[i];
  }

  private local(at: number): LocalTime {
    const d = new Date(at + this.offsetAt(at));
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours() };
  }

  /** The instant a local wall-clock time occurs (the later offset when it is ambiguous or skipped). */
  instant(t: LocalTime): number {
    const wall = Date.UTC(t.year, t.month - 1, t.day, t.hour);
    const at = wall - this.offsetAt(wall);
    return wall - this.offsetAt(at);
  }

  /** The start of the bucket (hour, day or month in the zone) that holds `at`. */
  bucketStart(interval: StatsInterval, at: number): number {
    if (interval === 'hour') return Math.floor(at / HOUR_MS) * HOUR_MS;
    const l = this.local(at);
    return this.instant({ year: l.year, month: l.month, day: interval === 'month' ? 1 : l.day, hour: 0 });
  }

  /** The start of the bucket after the one starting at `start`. */
  nextBucket(interval: StatsInterval, start: number): number {
    if (interval === 'hour') return start + HOUR_MS;
    // Noon of the start's local day, so a daylight-saving change never lands on another day.
    const l = this.local(start + 12 * HOUR_MS);
    if (interval === 'day') {
      const d = new Date(Date.UTC(l.year, l.month - 1, l.day + 1));
      return this.instant({ year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: 0 });
    }
    return this.instant({ year: l.month === 12 ? l.year + 1 : l.year, month: l.month === 12 ? 1 : l.month + 1, day: 1, hour: 0 });
  }

  /** The instant as ISO 8601 with the zone's offset at that instant (2026-03-29T00:00:00+01:00). */
  iso(at: number): string {
    const offset = this.offsetAt(at);
    const local = new Date(at + offset).toISOString().slice(0, 19);
    if (offset === 0) return `${local}Z`;
    const sign = offset < 0 ? '-' : '+';
    const minutes = Math.abs(offset) / MINUTE_MS;
    return `${local}${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
  }
}

/** Local midnight starting the given local date (YYYY-MM-DD) in the zone. */
export function localMidnight(timeZone: string, date: string): number {
  const [year, month, day] = date.split('-').map(Number);
  const wall = Date.UTC(year, month - 1, day);
  return new Zone(timeZone, wall - 2 * 24 * HOUR_MS, wall + 2 * 24 * HOUR_MS).instant({ year, month, day, hour: 0 });
}
