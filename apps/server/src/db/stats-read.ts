/**
 * Reads of the rollups (stats-rollups.ts) for the stats API: a series from hourly rows, and a
 * breakdown from daily rows for the whole UTC days of the range plus hourly rows for its ragged
 * ends — exact for any range of whole hours, and a year reads 365 rows per key, not 8,760.
 */
import type { Knex } from 'knex';
import type { StatsDimension } from '@reftrack/contract';
import { ROLLUP_COUNTERS, type RollupCounter } from './stats-rollups.js';

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

function whereLevel(q: Knex.QueryBuilder, programId: number, level: StatsLevel): Knex.QueryBuilder {
  q.where('program_id', programId);
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

const sums = (db: Knex) => ROLLUP_COUNTERS.map((c) => db.raw(`sum(${c}) as ${c}`));

function toSums(row: Record<string, unknown>, key: string): SumRow {
  const out = { key: row[key] as string | number, currency: String(row.currency) } as SumRow;
  for (const c of ROLLUP_COUNTERS) out[c] = Number(row[c] ?? 0);
  return out;
}

/** Hourly sums per hour and currency over [fromHour, toHour), in hour order. */
export async function readHourlySeries(db: Knex, programId: number, level: StatsLevel, fromHour: number, toHour: number): Promise<SumRow[]> {
  const rows = await whereLevel(db('stats_rollups'), programId, level)
    .where('span', 1)
    .where('bucket', '>=', fromHour)
    .where('bucket', '<', toHour)
    .groupBy('bucket', 'currency')
    .orderBy('bucket')
    .select('bucket', 'currency', ...sums(db));
  return rows.map((r: Record<string, unknown>) => toSums(r, 'bucket'));
}

/** The column a breakdown groups by on a level's rows. */
export type GroupColumn = 'partner_id' | 'link_id' | 'value';

/** Sums per group and currency over [fromHour, toHour): whole UTC days from daily rows, the rest from hourly rows. */
export async function readBreakdown(db: Knex, programId: number, level: StatsLevel, column: GroupColumn, fromHour: number, toHour: number): Promise<SumRow[]> {
  const firstDay = Math.ceil(fromHour / 24) * 24;
  const endDay = Math.floor(toHour / 24) * 24;
  const parts: Array<[span: number, from: number, to: number]> = firstDay < endDay ? [[24, firstDay, endDay], [1, fromHour, firstDay], [1, endDay, toHour]] : [[1, fromHour, toHour]];
  const selects = parts
    .filter(([, from, to]) => to > from)
    .map(([span, from, to]) => whereLevel(db('stats_rollups'), programId, level).where('span', span).where('bucket', '>=', from).where('bucket', '<', to).select(`${column} as k`, 'currency', ...ROLLUP_COUNTERS));
  const [first, ...rest] = selects;
  const union = rest.length === 0 ? first : first.unionAll(rest);
  const rows = await db.from(union.as('u')).groupBy('k', 'currency').select('k', 'currency', ...sums(db));
  return rows.map((r: Record<string, unknown>) => toSums(r, 'k'));
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
