/**
 * The rollups' time buckets (docs/analytics.md "Rollups"): UTC hours, UTC days and UTC calendar
 * months, each named by its first hour since the epoch; and how a range of whole hours splits into
 * the fewest of them.
 */
const HOUR_MS = 3_600_000;

/** The `span` of a month's rows (a month is 672 to 744 hours; this only names the level). */
export const MONTH_SPAN = 720;

const monthOfDay = new Map<number, number>();

/** The first hour of the UTC month holding the UTC day that starts at `dayHour`. Cached per day. */
export function monthBucketOfDay(dayHour: number): number {
  let month = monthOfDay.get(dayHour);
  if (month === undefined) {
    const d = new Date(dayHour * HOUR_MS);
    month = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / HOUR_MS;
    if (monthOfDay.size > 10_000) monthOfDay.clear();
    monthOfDay.set(dayHour, month);
  }
  return month;
}

/** The bucket of `span` (1, 24 or MONTH_SPAN) holding the hour `hour`: that hour, its UTC day's or its UTC month's first hour. */
export function bucketOf(span: number, hour: number): number {
  if (span === 1) return hour;
  const day = hour - (hour % 24);
  return span === 24 ? day : monthBucketOfDay(day);
}

/** The first hour of the UTC month after the one starting at `monthHour`. */
function nextMonth(monthHour: number): number {
  const d = new Date(monthHour * HOUR_MS);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / HOUR_MS;
}

/** Parts of a range: rows of `span` with buckets in [from, to). */
export type RangePart = [span: number, from: number, to: number];

/**
 * [fromHour, toHour) as whole UTC months (unless `months` is false), whole UTC days at their edges
 * and hours at theirs: a year reads 12 rows per key instead of 365 or 8,760, and the sum is exact.
 */
export function rangeParts(fromHour: number, toHour: number, months = true): RangePart[] {
  const parts: RangePart[] = [];
  const firstDay = Math.ceil(fromHour / 24) * 24;
  const endDay = Math.floor(toHour / 24) * 24;
  if (firstDay >= endDay) return [[1, fromHour, toHour]];
  parts.push([1, fromHour, firstDay], [1, endDay, toHour]);
  let firstMonth = monthBucketOfDay(firstDay);
  if (firstMonth < firstDay) firstMonth = nextMonth(firstMonth);
  const endMonth = monthBucketOfDay(endDay);
  if (months && firstMonth < endMonth) {
    parts.push([24, firstDay, firstMonth], [24, endMonth, endDay], [MONTH_SPAN, firstMonth, endMonth]);
  } else {
    parts.push([24, firstDay, endDay]);
  }
  return parts.filter(([, from, to]) => to > from);
}

/** Parts of a range with a sign: +1 rows added, -1 rows taken off (a month less its first hours). */
export type SignedPart = [span: number, from: number, to: number, sign: 1 | -1];

/** About how many rows per key the parts read. */
function cost(parts: RangePart[]): number {
  return parts.reduce((n, [span, from, to]) => n + (span === MONTH_SPAN ? 1 : (to - from) / span), 0);
}

/**
 * [fromHour, toHour) as rangeParts, or — where fewer rows are read that way — with a ragged edge
 * taken as its whole UTC month less the hours and days outside the range. A year of New York days
 * starts 5 hours into a UTC month: its month row less 5 hourly rows, instead of 29 daily and 19
 * hourly rows. Exact either way (a month's row is the sum of its hours).
 */
export function signedRangeParts(fromHour: number, toHour: number): SignedPart[] {
  const plain = rangeParts(fromHour, toHour);
  let best: SignedPart[] = plain.map(([span, from, to]) => [span, from, to, 1]);
  let bestCost = cost(plain);
  const monthStart = monthBucketOfDay(Math.floor(fromHour / 24) * 24);
  const lastMonth = monthBucketOfDay(Math.floor((toHour - 1) / 24) * 24);
  const monthEnd = lastMonth === toHour ? toHour : nextMonth(lastMonth);
  for (const lo of [fromHour, monthStart]) {
    for (const hi of [toHour, monthEnd]) {
      if (lo === fromHour && hi === toHour) continue;
      const outer = rangeParts(lo, hi);
      const before = lo < fromHour ? rangeParts(lo, fromHour) : [];
      const after = hi > toHour ? rangeParts(toHour, hi) : [];
      const c = cost(outer) + cost(before) + cost(after);
      if (c < bestCost) {
        bestCost = c;
        best = [...outer.map(([span, from, to]): SignedPart => [span, from, to, 1]), ...[...before, ...after].map(([span, from, to]): SignedPart => [span, from, to, -1])];
      }
    }
  }
  return best;
}
