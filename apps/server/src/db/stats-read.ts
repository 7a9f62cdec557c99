/**
 * Reads of the rollups (stats-rollups.ts) for the stats API: a series from hourly rows summed per
 * local day by the database, and a breakdown from monthly, daily and hourly rows (the fewest that
 * cover the range exactly: a year reads about 12 rows per key, not 8,760). Every read sums a key's
 * settled and recent rows (stats-rollups-recent.ts).
 */
import type { Knex } from 'knex';
import type { StatsDimension } from '@reftrack/contract';
import { ROLLUP_COUNTERS, rollupRows, type RollupCounter } from './stats-rollups.js';
import { rangeParts, signedRangeParts } from './stats-buckets.js';

/** Which rollup rows a query reads: the program's, a partner's or a link's, or one dimension's. */
export type StatsLevel =
  | { kind: 'program' }
  | { kind: 'links'; partnerId: number | null; linkId: number | null }
  | { kind: 'dimension'; name: StatsDimension; value: string | null };

export type Sums = Record<RollupCounter, number>;
export interface SumRow extends Sums {
  key: string | number;
  currency: string;
}

/** The rows of a level of the program in one span: settled and recent alike (stats-rollups.ts, rollupRows). */
function whereLevel(db: Knex, programId: number, level: StatsLevel, span: number): Knex.QueryBuilder {
  const q = db.from(db.raw(rollupRows(db, span))).where('program_id', programId).where('span', span);
  if (level.kind === 'program') return q.where({ dim: '', partner_id: 0, link_id: 0, value: '' });
  if (level.kind === 'dimension') {
    q.where({ dim: level.name, partner_id: 0, link_id: 0 });
    return level.value === null ? q : q.where('value', level.value);
  }
  q.where('dim', '');
  if (level.partnerId !== null) q.where('partner_id', level.partnerId);
  else q.where('partner_id', '>', 0);
  if (level.linkId !== null) q.where('link_id', level.linkId);
  return q;
}

/** The counters summed. */
const sums = (db: Knex) => ROLLUP_COUNTERS.map((c) => db.raw(`sum(${c}) as ${c}`));

function toSums(row: Record<string, unknown>, key: string): SumRow {
  const out = { key: row[key] as string | number, currency: String(row.currency) } as SumRow;
  for (const c of ROLLUP_COUNTERS) out[c] = Number(row[c] ?? 0);
  return out;
}

/**
 * A stretch of the range over which the caller's local days start at the same hour of the UTC day:
 * `shift` hours added to a UTC hour make its local day start a multiple of 24 (0 to 23); null for
 * an hourly series.
 */
export interface SeriesSegment {
  from: number;
  to: number;
  shift: number | null;
}

/**
 * Sums per currency and series key: the hour (an hourly series), or the UTC hour a local day starts
 * at. Where local days are UTC days (shift 0: UTC, or London in winter) the daily rows — and, for a
 * monthly series, the monthly rows — are read instead of hours; elsewhere daily rows corrected by
 * the hours between the UTC and the local midnight. Either way a year's daily series reads back
 * about 365 rows per currency (three times that where local days are shifted).
 */
export async function readSeries(db: Knex, programId: number, level: StatsLevel, segments: SeriesSegment[], months: boolean): Promise<SumRow[]> {
  // The early-hour corrections of shifted segments: `fix` n on a row names fixes[n - 1].
  const fixes: Array<{ r: number; first: number; end: number }> = [];
  const selects = segments.flatMap(({ from, to, shift }) => {
    if (shift === 0) {
      return rangeParts(from, to, months).map(([span, lo, hi]) =>
        whereLevel(db, programId, level, span).where('bucket', '>=', lo).where('bucket', '<', hi).groupBy('currency', 'bucket').select('bucket as k', 'currency', db.raw('0 as fix'), ...sums(db)),
      );
    }
    // Integers computed here, never input: written into the statement so the select and the
    // group by name the same expression.
    const hourly = (lo: number, hi: number, key: string, fix = 0, early?: number) => {
      const q = whereLevel(db, programId, level, 1).where('bucket', '>=', lo).where('bucket', '<', hi);
      if (early !== undefined) q.whereRaw(`bucket % 24 < ${early}`);
      return q.groupBy('currency', db.raw(key)).select(db.raw(`${key} as k`), 'currency', db.raw(`${fix} as fix`), ...sums(db));
    };
    if (shift === null) return [hourly(from, to, 'bucket')];
    // Local days start at this hour of the UTC day. A whole local day is its UTC day's daily row,
    // less that day's hours before `r`, plus the next day's: a fifth of the hours for New York,
    // instead of all of them, read once per UTC day (below). The range's ragged ends are summed
    // from hours.
    const r = (24 - Math.trunc(shift)) % 24;
    const first = Math.ceil((from - r) / 24) * 24 + r;
    const end = Math.floor((to - r) / 24) * 24 + r;
    const byDay = `(bucket + ${Math.trunc(shift)}) / 24 * 24 - ${Math.trunc(shift)}`;
    if (first >= end) return [hourly(from, to, byDay)];
    fixes.push({ r, first, end });
    return [
      ...(first > from ? [hourly(from, first, byDay)] : []),
      ...(to > end ? [hourly(end, to, byDay)] : []),
      whereLevel(db, programId, level, 24).where('bucket', '>=', first - r).where('bucket', '<', end - r).groupBy('currency', 'bucket').select(db.raw(`bucket + ${r} as k`), 'currency', db.raw('0 as fix'), ...sums(db)),
      // Each UTC day's first r hours, summed per UTC day, read once: taken off the local day
      // starting that day and added to the one before (below) — one pass over the hours, not two.
      hourly(first - r, end - r + 24, 'bucket - bucket % 24', fixes.length, r),
    ];
  });
  // Each grouped select as a subquery: knex would put a first select's GROUP BY after the UNION.
  const [first, ...rest] = selects.map((q, i) => db.select('*').from(q.as(`s${i}`)));
  const rows = await (rest.length === 0 ? first : first.unionAll(rest));
  const out: SumRow[] = [];
  for (const row of rows as Array<Record<string, unknown>>) {
    const fix = Number(row.fix);
    const summed = toSums(row, 'k');
    if (fix === 0) {
      out.push(summed);
      continue;
    }
    const { r, first, end } = fixes[fix - 1];
    const day = Number(summed.key);
    if (day + r < end) out.push(scaled(summed, day + r, -1));
    if (day + r - 24 >= first) out.push(scaled(summed, day + r - 24, 1));
  }
  return out;
}

/** A row's counters under another key, negated with `sign` -1. */
function scaled(row: SumRow, key: number, sign: 1 | -1): SumRow {
  const out = { ...row, key };
  if (sign === -1) for (const c of ROLLUP_COUNTERS) out[c] = -row[c];
  return out;
}

/** The column a breakdown groups by on a level's rows. */
export type GroupColumn = 'partner_id' | 'link_id' | 'value';

/**
 * Sums per group and currency over [fromHour, toHour): whole UTC months, then days, then hours,
 * or a month less the hours and days outside the range where that reads fewer rows
 * (stats-buckets.ts). A group only in the rows taken off sums to zero and is left out.
 */
export async function readBreakdown(db: Knex, programId: number, level: StatsLevel, column: GroupColumn, fromHour: number, toHour: number): Promise<SumRow[]> {
  const selects = signedRangeParts(fromHour, toHour).map(([span, from, to, sign]) =>
    whereLevel(db, programId, level, span)
      .where('bucket', '>=', from)
      .where('bucket', '<', to)
      .select(`${column} as k`, 'currency', ...ROLLUP_COUNTERS.map((c) => (sign === 1 ? c : db.raw(`-${c} as ${c}`)))),
  );
  const [first, ...rest] = selects;
  const union = rest.length === 0 ? first : first.unionAll(rest);
  const rows = await db.from(union.as('u')).groupBy('k', 'currency').select('k', 'currency', ...sums(db));
  return rows.map((r: Record<string, unknown>) => toSums(r, 'k')).filter((r: SumRow) => ROLLUP_COUNTERS.some((c) => r[c] !== 0));
}

/** Partners' names and links' short links, for a breakdown's labels. */
export async function readLabels(db: Knex, programId: number, column: 'partner_id' | 'link_id', ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows =
    column === 'partner_id'
      ? await db('partners').whereIn('id', ids).select('id', 'name as label')
      : await db('referral_links').where('program_id', programId).whereIn('id', ids).select('id', 'short_link as label');
  return new Map(rows.map((r: { id: number; label: string }) => [Number(r.id), String(r.label)]));
}

/** The partner of a link of the program (a link's series reads that partner's rows only), or null. */
export async function linkPartner(db: Knex, programId: number, linkId: number): Promise<number | null> {
  const row = await db('referral_links').where({ id: linkId, program_id: programId }).first('partner_id');
  return row?.partner_id == null ? null : Number(row.partner_id);
}
