/**
 * The rollups the stats API reads (stats_rollups, docs/analytics.md "Rollups"). Every counted click,
 * lead, sale and refund adds to rows at these levels, each per UTC hour (span 1), per UTC day
 * (span 24) and per UTC calendar month (MONTH_SPAN):
 *
 * - the link: (partner, link), dimension '' — series and breakdowns per partner and per link;
 * - the program: (0, 0), dimension '' — the program's series without a filter;
 * - each dimension of the click: (0, 0, dimension, value) — breakdowns and filters by country,
 *   device, browser, referrer domain and UTM parameter.
 *
 * Click and lead counters sit on rows of currency ''; a sale's and a refund's on rows of their
 * currency. Increments are summed per key before they are written, and written in key order, by
 * every writer — the outbox consumers of clicks and of leads, sales and refunds
 * (jobs/stats-clicks.ts, jobs/stats-conversions.ts) and `stats rebuild` — so no two writers lock
 * rollup rows in opposite orders.
 *
 * The consumers add hourly rows only to `stats_rollups_recent`, the hours that may still grow; the
 * stats thread adds each ended hour to its hour's, day's and month's rows in `stats_rollups`
 * (stats-rollups-recent.ts), and the stats API reads both, counting a recent hour in its day and
 * month as well (rollupRows). `stats rebuild` writes its history straight into `stats_rollups`.
 */
import type { Knex } from 'knex';
import { STATS_DIMENSIONS } from '@reftrack/contract';
import { clickDimensions } from '../domain/click-dimensions.js';
import { bucketOf, MONTH_SPAN } from './stats-buckets.js';
import { inLists } from './in-lists.js';
import { isSqlite } from './knex.js';
import { runStatement } from './statement.js';

export const HOUR_MS = 3_600_000;
/** An hour, a UTC day, a UTC calendar month (its `bucket`: the month's first hour). */
export const SPANS = [1, 24, MONTH_SPAN] as const;

export const ROLLUP_COUNTERS = ['clicks', 'unique_clicks', 'bot_clicks', 'leads', 'sales', 'revenue_cents', 'refunds', 'refunded_cents'] as const;
export type RollupCounter = (typeof ROLLUP_COUNTERS)[number];
export type Counters = Partial<Record<RollupCounter, number>>;

/** The key's columns in the order rows are sorted (and locked) by; the primary key's order. */
export const KEY_ORDER = ['program_id', 'span', 'dim', 'partner_id', 'link_id', 'value', 'bucket', 'currency'] as const;

/** The two tables of rollup rows: the buckets that have ended, and those that may still grow. */
export type RollupTable = 'stats_rollups' | 'stats_rollups_recent';
export const SETTLED: RollupTable = 'stats_rollups';
export const RECENT: RollupTable = 'stats_rollups_recent';

const COUNTER_COLUMNS = ROLLUP_COUNTERS.join(', ');
const ALL_COLUMNS = [...KEY_ORDER, ...ROLLUP_COUNTERS].join(', ');

/**
 * The first hour of the UTC month holding the hour `column`, in SQL (bucketOf(MONTH_SPAN, hour) in
 * stats-buckets.ts). PostgreSQL: a bucket is an int4, and its seconds since the epoch overflow one
 * in 2038.
 */
export const monthOfHourSql = (db: Knex | Knex.Transaction, column: string): string =>
  isSqlite(db)
    ? `cast(strftime('%s', ${column} * 3600, 'unixepoch', 'start of month') as integer) / 3600`
    : `cast(extract(epoch from date_trunc('month', to_timestamp(${column}::int8 * 3600) at time zone 'UTC')) / 3600 as int4)`;

/**
 * The hourly rows of `table` as rows of their UTC day (span 24) or month (MONTH_SPAN): a select of
 * the columns of ALL_COLUMNS, the span cast to the column's type (int2) so that PostgreSQL pushes a
 * query's conditions into each arm of a UNION ALL holding it (SQLite reads the cast as its integer).
 */
export function hoursAs(db: Knex | Knex.Transaction, table: string, span: 24 | typeof MONTH_SPAN): string {
  const bucket = span === 24 ? 'bucket - bucket % 24' : monthOfHourSql(db, 'bucket');
  return `select program_id, cast(${span} as int2) as span, dim, partner_id, link_id, value, ${bucket} as bucket, currency, ${COUNTER_COLUMNS} from ${table} where span = 1`;
}

const rollupRowsSql = new Map<string, string>();
/**
 * The rollup rows of one span, for the reads (stats-read.ts): the settled rows, the recent ones,
 * and for a day or a month the recent hours again as its rows — a recent hour is in no settled
 * day or month row yet. Every query sums a key's rows. Both databases push a query's conditions
 * into each arm of the UNION ALL, so each table is read through its own key (the recent one's
 * hours by program and span 1).
 */
export function rollupRows(db: Knex | Knex.Transaction, span: number): string {
  const name = `${isSqlite(db) ? 'sqlite' : 'postgres'}:${span}`;
  let sql = rollupRowsSql.get(name);
  if (sql === undefined) {
    const arms = [`select ${ALL_COLUMNS} from ${SETTLED}`, `select ${ALL_COLUMNS} from ${RECENT}`];
    if (span === 24 || span === MONTH_SPAN) arms.push(hoursAs(db, RECENT, span));
    sql = `(${arms.join(' union all ')}) as stats_rollups`;
    rollupRowsSql.set(name, sql);
  }
  return sql;
}

export interface RollupRow {
  program_id: number;
  span: number;
  bucket: number;
  partner_id: number;
  link_id: number;
  dim: string;
  value: string;
  currency: string;
  counters: Record<RollupCounter, number>;
}

/** What one event adds: where it is counted and how much. */
export interface RollupEvent {
  programId: number;
  partnerId: number | null;
  linkId: number | null;
  /** The click's dimension values (STATS_DIMENSIONS order), or null to count it on the link and program rows only. */
  dims: string[] | null;
  currency: string;
  at: number;
  counters: Counters;
}

const zero = (): Record<RollupCounter, number> => ({ clicks: 0, unique_clicks: 0, bot_clicks: 0, leads: 0, sales: 0, revenue_cents: 0, refunds: 0, refunded_cents: 0 });

/** Events of one program, partner, link, currency, hour and dimension values, summed. */
type Group = RollupEvent & { counters: Record<RollupCounter, number> };

/** Increments summed per rollup key, in memory (one batch, one unit of work). */
export class RollupSet {
  /**
   * Events summed per what decides their rows (program, partner, link, currency, hour, dimension
   * values) before they are spread over their rows (9 recent ones, 27 settled ones): a stats pass's
   * thousands of events share a few hundred such groups, and making a row key string per event and
   * row was a third of the stats thread's time (docs/performance.md, "Longer stats passes").
   */
  private readonly groups = new Map<string, Group>();

  add(event: RollupEvent): void {
    const hour = Math.floor(event.at / HOUR_MS);
    // The dimension values come from visitors' URLs and may hold any character: JSON keeps them apart.
    const key = `${event.programId}\u0000${event.partnerId}\u0000${event.linkId}\u0000${event.currency}\u0000${hour}\u0000${JSON.stringify(event.dims)}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { ...event, at: hour * HOUR_MS, counters: zero() };
      this.groups.set(key, group);
    }
    for (const name in event.counters) group.counters[name as RollupCounter] += event.counters[name as RollupCounter] ?? 0;
  }

  /**
   * The rows in key order: each group's increments added to the row of every level it counts at, in
   * each of `spans` (the recent table takes hours only, the settled one every span).
   */
  sorted(spans: readonly number[] = SPANS): RollupRow[] {
    const rows = new Map<string, RollupRow>();
    for (const group of this.groups.values()) {
      for (const span of spans) {
        const bucket = bucketOf(span, Math.floor(group.at / HOUR_MS));
        if (group.partnerId !== null && group.linkId !== null) bump(rows, group, span, bucket, group.partnerId, group.linkId, '', '');
        bump(rows, group, span, bucket, 0, 0, '', '');
        if (group.dims) for (let i = 0; i < STATS_DIMENSIONS.length; i++) bump(rows, group, span, bucket, 0, 0, STATS_DIMENSIONS[i], group.dims[i] ?? '');
      }
    }
    return [...rows.values()].sort(compareKeys);
  }
}

function bump(rows: Map<string, RollupRow>, group: Group, span: number, bucket: number, partnerId: number, linkId: number, dim: string, value: string): void {
  // The value last: it alone may hold any character, the fields before it never hold the separator.
  const key = `${group.programId}\u0000${span}\u0000${bucket}\u0000${partnerId}\u0000${linkId}\u0000${dim}\u0000${group.currency}\u0000${value}`;
  let row = rows.get(key);
  if (!row) {
    row = { program_id: group.programId, span, bucket, partner_id: partnerId, link_id: linkId, dim, value, currency: group.currency, counters: zero() };
    rows.set(key, row);
  }
  for (const name of ROLLUP_COUNTERS) row.counters[name] += group.counters[name];
}

const text = (x: string, y: string): number => (x === y ? 0 : x < y ? -1 : 1);

/**
 * KEY_ORDER, column by column, written out: the sort of a pass's few thousand rows was an eighth
 * of the stats thread's time when it looked the columns up by name in a loop.
 */
function compareKeys(a: RollupRow, b: RollupRow): number {
  return (
    a.program_id - b.program_id ||
    a.span - b.span ||
    text(a.dim, b.dim) ||
    a.partner_id - b.partner_id ||
    a.link_id - b.link_id ||
    text(a.value, b.value) ||
    a.bucket - b.bucket ||
    text(a.currency, b.currency)
  );
}

/**
 * Rows per statement on SQLite: 512 at most (16 values a row, far below what SQLite binds in one
 * statement), and a remainder in powers of two — so one connection prepares at most ten statement
 * texts, where a size per remainder prepared a statement of up to 8,000 placeholders on most
 * passes and kept up to 500 of them.
 */
const UPSERT_ROWS = 512;
function chunkSize(left: number): number {
  if (left >= UPSERT_ROWS) return UPSERT_ROWS;
  return 2 ** Math.floor(Math.log2(left));
}
const COLUMNS = [...KEY_ORDER, ...ROLLUP_COUNTERS];
/** Adds a row's counters to the row of its key in `table`, if there is one. */
export const onConflict = (table: RollupTable): string => `on conflict (${KEY_ORDER.join(', ')}) do update set ${ROLLUP_COUNTERS.map((c) => `${c} = ${table}.${c} + excluded.${c}`).join(', ')}`;
// SQLite: the statement's text per table and row count, built once (multi-row VALUES and ON
// CONFLICT … DO UPDATE); the client keeps a prepared statement per text (db/sqlite-client.ts).
// knex's own multi-row insert is a compound SELECT on SQLite, capped at 500 terms, and compiling it
// cost a consumer pass more than running it. Run with runStatement, not `raw()`, which rewrote the
// whole text placeholder by placeholder on every call: a sixth of the stats thread's time.
const upsertSql: Record<RollupTable, string[]> = { stats_rollups: [], stats_rollups_recent: [] };
const upsertStatement = (table: RollupTable, rows: number): string =>
  (upsertSql[table][rows] ??= `insert into ${table} (${COLUMNS.join(', ')}) values ${Array(rows).fill(`(${COLUMNS.map(() => '?').join(', ')})`).join(', ')} ${onConflict(table)}`);

// PostgreSQL: one text whatever the row count, a column's values per array parameter. Thousands of
// scalar parameters cost PostgreSQL a parse and plan of a new statement text per pass, and node-pg
// a placeholder each; sixteen arrays are one of each (the same shape the click batch function takes).
const PG_TYPES: Record<(typeof COLUMNS)[number], string> = { program_id: 'int4', span: 'int2', dim: 'text', partner_id: 'int4', link_id: 'int4', value: 'text', bucket: 'int4', currency: 'text', clicks: 'int8', unique_clicks: 'int8', bot_clicks: 'int8', leads: 'int8', sales: 'int8', revenue_cents: 'int8', refunds: 'int8', refunded_cents: 'int8' };
const pgUpsert = (table: RollupTable): string => `insert into ${table} (${COLUMNS.join(', ')}) select * from unnest(${COLUMNS.map((c, i) => `$${i + 1}::${PG_TYPES[c]}[]`).join(', ')}) ${onConflict(table)}`;
const PG_UPSERT: Record<RollupTable, string> = { stats_rollups: pgUpsert(SETTLED), stats_rollups_recent: pgUpsert(RECENT) };

/**
 * The spans a table's rows are written in: the recent table holds hours only — a recent hour is
 * read as its day's and month's rows too (rollupRows) and added to them when it ends
 * (stats-rollups-recent.ts) — so a stats pass writes a third of the rows it would for all three
 * (docs/performance.md, "Recent rows are hours").
 */
const RECENT_SPANS = [1] as const;
export const spansOf = (table: RollupTable): readonly number[] => (table === RECENT ? RECENT_SPANS : SPANS);

/**
 * Adds the set's increments to `table` (the recent rows unless told) in the caller's transaction,
 * in key order (the lock order every writer keeps): statements of up to UPSERT_ROWS rows on SQLite,
 * one in all on PostgreSQL.
 */
export async function upsertRollups(trx: Knex | Knex.Transaction, set: RollupSet, table: RollupTable = RECENT): Promise<void> {
  await upsertRows(trx, set.sorted(spansOf(table)), table);
}

/**
 * Rows per transaction of a stats pass on SQLite (jobs/outbox-runner.ts, "chunked pass"): about
 * 5–10 ms of the file's write lock, which every lead, sale and click batch waits for meanwhile.
 */
const PART_ROWS = 2048;

/**
 * A stats consumer's pass as parts (jobs/outbox-runner.ts, PreparedWrites): the set's hourly rows in
 * key order, PART_ROWS a part on SQLite, and one part on PostgreSQL (its pass is one transaction, and
 * one statement takes any number of rows); with a digest of every row, which a resumed pass
 * compares.
 */
export function rollupWrites(db: Knex | Knex.Transaction, set: RollupSet): { parts: Array<(trx: Knex.Transaction) => Promise<void>>; digest: string } {
  const rows = set.sorted(spansOf(RECENT));
  const size = isSqlite(db) ? PART_ROWS : Math.max(rows.length, 1);
  const parts: Array<(trx: Knex.Transaction) => Promise<void>> = [];
  for (let i = 0; i < rows.length; i += size) {
    const part = rows.slice(i, i + size);
    parts.push((trx) => upsertRows(trx, part, RECENT));
  }
  let digest: string | undefined;
  // Computed when read: only a pass of two or more parts keeps it, or a resumed pass compares it.
  return {
    parts,
    get digest() {
      return (digest ??= digestOf(rows));
    },
  };
}

/** FNV-1a over every row's key and counters, with the row count: "n:hash" (at most 19 characters). */
function digestOf(rows: readonly RollupRow[]): string {
  let h = 0x811c9dc5;
  const num = (n: number): void => {
    h = Math.imul(h ^ (n | 0), 0x01000193);
    h = Math.imul(h ^ Math.floor(n / 0x100000000), 0x01000193);
  };
  const str = (x: string): void => {
    for (let i = 0; i < x.length; i++) h = Math.imul(h ^ x.charCodeAt(i), 0x01000193);
    h = Math.imul(h ^ 0xffff, 0x01000193);
  };
  for (const r of rows) {
    for (const k of [r.program_id, r.span, r.partner_id, r.link_id, r.bucket]) num(k);
    for (const k of [r.dim, r.value, r.currency]) str(k);
    for (const c of ROLLUP_COUNTERS) num(r.counters[c]);
  }
  return `${rows.length}:${(h >>> 0).toString(16)}`;
}

async function upsertRows(trx: Knex | Knex.Transaction, rows: readonly RollupRow[], table: RollupTable): Promise<void> {
  if (rows.length === 0) return;
  if (!isSqlite(trx)) {
    const columns: unknown[][] = COLUMNS.map(() => new Array(rows.length));
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      for (let k = 0; k < KEY_ORDER.length; k++) columns[k][i] = r[KEY_ORDER[k]];
      for (let c = 0; c < ROLLUP_COUNTERS.length; c++) columns[KEY_ORDER.length + c][i] = r.counters[ROLLUP_COUNTERS[c]];
    }
    await runStatement(trx, PG_UPSERT[table], columns);
    return;
  }
  for (let i = 0, size = 0; i < rows.length; i += size) {
    size = chunkSize(rows.length - i);
    const chunk = rows.slice(i, i + size);
    const values: unknown[] = [];
    // COLUMNS' order, written out (a pass pushes tens of thousands of values).
    for (const r of chunk) {
      const n = r.counters;
      values.push(r.program_id, r.span, r.dim, r.partner_id, r.link_id, r.value, r.bucket, r.currency);
      values.push(n.clicks, n.unique_clicks, n.bot_clicks, n.leads, n.sales, n.revenue_cents, n.refunds, n.refunded_cents);
    }
    await runStatement(trx, upsertStatement(table, chunk.length), values);
  }
}

const UNKNOWN_CLICK = { page_url: null, referrer_url: null, geo_country: null, device_type: null, browser_name: null };

type AttributedClick = { link_id: number | null; page_url: string | null; referrer_url: string | null; geo_country: string | null; device_type: string | null; browser_name: string | null };

/** A lead, sale or refund to count: where (its customer's click) and how much. */
export interface Conversion {
  programId: number;
  partnerId: number | null;
  clickId: string | null;
  at: number;
  currency: string;
  counters: Counters;
}

/**
 * The attributed click of each customer — its first click event (first-click attribution, 3.1) —
 * for a batch of click ids, in one query. `click_events.click_id` has no index (each one costs the
 * click lane, migrations/20261122190000): the customer's row (unique `click_id`) gives the program,
 * test flag and time of that first click, and the listing index `(program_id, is_test,
 * click_timestamp)` finds its event among the few of the same millisecond.
 */
async function attributedClicks(trx: Knex | Knex.Transaction, conversions: readonly Conversion[]): Promise<Map<string, AttributedClick>> {
  const ids = [...new Set(conversions.map((c) => c.clickId).filter((id): id is string => id !== null))];
  const found = new Map<string, AttributedClick>();
  // A pass reads up to thousands of conversions (jobs/stats.worker.ts): IN lists of a thousand.
  for (const list of inLists(ids, 1000)) {
    const rows = await trx('customers as c')
      .join('click_events as e', (on) => on.on('e.program_id', 'c.program_id').andOn('e.is_test', 'c.is_test').andOn('e.click_timestamp', 'c.click_at').andOn('e.click_id', 'c.click_id'))
      .whereIn('c.click_id', list)
      .orderBy('e.id')
      .select('c.program_id', 'c.click_id', 'e.link_id', 'e.page_url', 'e.referrer_url', 'e.geo_country', 'e.device_type', 'e.browser_name');
    // Each customer's click ids are in one list, so its first click is the first row of its key.
    for (const row of rows) {
      const key = `${row.program_id}\u0000${row.click_id}`;
      if (!found.has(key)) found.set(key, row as AttributedClick);
    }
  }
  return found;
}

/**
 * Leads, sales and refunds as rollup increments under the link and dimensions of each customer's
 * attributed click (at the conversion's own time): one read of the clicks for the whole batch
 * (jobs/stats-conversions.ts, the outbox consumer, then upserts the set).
 */
export async function conversionSet(db: Knex | Knex.Transaction, conversions: readonly Conversion[]): Promise<RollupSet> {
  const set = new RollupSet();
  if (conversions.length === 0) return set;
  const clicks = await attributedClicks(db, conversions);
  for (const c of conversions) {
    const click = c.clickId === null ? undefined : clicks.get(`${c.programId}\u0000${c.clickId}`);
    set.add({
      programId: c.programId,
      partnerId: c.partnerId,
      linkId: click?.link_id == null ? null : Number(click.link_id),
      // Without a click (should not happen for an attributed customer) it counts as unknown everywhere.
      dims: clickDimensions(click ?? UNKNOWN_CLICK),
      currency: c.currency,
      at: c.at,
      counters: c.counters,
    });
  }
  return set;
}
