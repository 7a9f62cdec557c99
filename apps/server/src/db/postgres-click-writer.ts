/**
 * The click batch writer on PostgreSQL: each batch is one call of the batch function
 * `reftrack_record_clicks_v3`, in one round trip and one transaction, on a pool of two connections
 * of its own, so two batches commit at once (the counter rows are updated last and in key order,
 * so they never deadlock).
 *
 * It runs on the event loop, unlike SQLite's writer (click-writer-thread.ts). On PostgreSQL a batch
 * costs the process only its encoding and a socket write and read; a writer thread added a
 * structured clone and a thread wake-up each way, and the thread's own socket write, about 21 µs of
 * CPU per click on a host of two cores that PostgreSQL and the load share. On the event loop the
 * click route made 8–11% more clicks a second, with less CPU per click for the whole process
 * (docs/performance.md, "The PostgreSQL click batch on the event loop", session 52).
 */
import pg from 'pg';
import { CLICK_EVENT_COLUMNS, CLICK_OUTBOX_COLUMNS, CUSTOMER_COLUMNS, type BatchRows, type BatchWriter } from './click-rows.js';
import { arrayLiteral, columnLiteral } from './pg-array-literal.js';
import { keepHeap } from './pg-backend-heap.js';

/** Batches committing at once, each on a connection of the writer's pool. */
const CONNECTIONS = 2;

/** Column types of the function's array parameters; every other column of these tables is text. */
const TYPES: Record<string, string> = {
  program_id: 'int4',
  partner_id: 'int4',
  link_id: 'int4',
  is_test: 'bool',
  is_bot: 'bool',
  click_at: 'int8',
  click_timestamp: 'int8',
  created_at: 'int8',
  version: 'int2',
  occurred_at: 'int8',
};

/**
 * Version 3's rollup parameters (migration 20261125160000_stats_rollups), always passed empty: the
 * batch's clicks reach the rollups through its outbox rows (jobs/stats-clicks.ts). Version 3 stays
 * the function called so that no migration is needed and a server of the previous release can run
 * beside this one during a deploy.
 */
const ROLLUP_PARAMETERS: ReadonlyArray<readonly [string, string]> = [
  ['r_program_id', 'int4'], ['r_span', 'int2'], ['r_bucket', 'int4'], ['r_partner_id', 'int4'], ['r_link_id', 'int4'],
  ['r_dim', 'text'], ['r_value', 'text'], ['r_currency', 'text'], ['r_clicks', 'int8'], ['r_unique_clicks', 'int8'], ['r_bot_clicks', 'int8'],
];

/**
 * The function's parameters, named after the columns, in the order of the values of `encode`:
 * the customers' and the click events' columns, the link and the partner-program increments (which
 * the batcher sorted by key), the batch's outbox rows (its `clicks.recorded` events, committed
 * with its clicks), then the empty rollup rows.
 */
const PARAMETERS: ReadonlyArray<readonly [string, string]> = [
  ...CUSTOMER_COLUMNS.map((c) => [`c_${c}`, TYPES[c] ?? 'text'] as const),
  ...CLICK_EVENT_COLUMNS.map((c) => [`e_${c}`, TYPES[c] ?? 'text'] as const),
  ['l_id', 'int4'], ['l_n', 'int8'], ['l_at', 'int8'],
  ['p_partner_id', 'int4'], ['p_program_id', 'int4'], ['p_n', 'int8'], ['p_at', 'int8'],
  ...CLICK_OUTBOX_COLUMNS.map((c) => [`o_${c}`, TYPES[c] ?? 'text'] as const),
  ...ROLLUP_PARAMETERS,
];

/**
 * Named arguments: a column list that no longer matches the function fails loudly instead of
 * writing values into the wrong columns. A named statement is parsed once per connection.
 */
export const RECORD_CLICKS_SQL = `select reftrack_record_clicks_v3(${PARAMETERS.map(([name, type], i) => `${name} => $${i + 1}::${type}[]`).join(', ')})`;
const RECORD_CLICKS_NAME = 'rt_record_clicks_v3';

const EMPTY = '{}';

/** The function's arguments for one batch, as array literals in the order of PARAMETERS. */
export function encodeBatch({ customers, events, outbox, links, enrollments }: BatchRows): string[] {
  const values: string[] = [];
  for (let i = 0; i < CUSTOMER_COLUMNS.length; i++) values.push(columnLiteral(customers, i));
  for (let i = 0; i < CLICK_EVENT_COLUMNS.length; i++) values.push(columnLiteral(events, i));
  values.push(arrayLiteral(links.map((l) => l.id)), arrayLiteral(links.map((l) => l.n)), arrayLiteral(links.map((l) => l.at)));
  values.push(
    arrayLiteral(enrollments.map((e) => e.partnerId)),
    arrayLiteral(enrollments.map((e) => e.programId)),
    arrayLiteral(enrollments.map((e) => e.n)),
    arrayLiteral(enrollments.map((e) => e.at)),
  );
  for (let i = 0; i < CLICK_OUTBOX_COLUMNS.length; i++) values.push(columnLiteral(outbox, i));
  for (let i = 0; i < ROLLUP_PARAMETERS.length; i++) values.push(EMPTY);
  return values;
}

/**
 * The schema is a startup parameter of each connection, so it holds from its first statement: a
 * `set search_path` sent on the pool's `connect` event would run beside the batch's own statement
 * (node-pg warns that pg 9 refuses two at once), and had it failed the batches would have gone to
 * another schema. PostgreSQL splits `options` on spaces, with backslash escapes.
 */
function startupOptions(schema: string | undefined): { options?: string } {
  return schema ? { options: `-c search_path=${pg.escapeIdentifier(schema).replace(/[\\ ]/g, (c) => `\\${c}`)}` } : {};
}

export function postgresClickWriter(connectionString: string, schema: string | undefined): BatchWriter {
  // onConnect runs before a new connection's first batch: its backend keeps its heap between batches.
  const pool = new pg.Pool({ connectionString, max: CONNECTIONS, connectionTimeoutMillis: 10_000, application_name: 'reftrack click writer', onConnect: keepHeap, ...startupOptions(schema) });
  // A connection that fails while idle is dropped by the pool; the next batch opens a new one.
  // Without a listener the pool's 'error' event would end the process.
  pool.on('error', () => undefined);
  let closed: Promise<void> | undefined;
  return {
    maxInFlight: CONNECTIONS,
    async write(rows: BatchRows): Promise<void> {
      await pool.query({ name: RECORD_CLICKS_NAME, text: RECORD_CLICKS_SQL, values: encodeBatch(rows) });
    },
    close(): Promise<void> {
      return (closed ??= pool.end());
    },
  };
}
