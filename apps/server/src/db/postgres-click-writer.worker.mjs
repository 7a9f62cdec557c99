// @ts-check
/**
 * The click writer thread (PostgreSQL): commits the click route's group-committed batches on
 * connections of its own, so that building the statements, the socket writes of every round trip
 * and the waits for them happen beside the event loop instead of on it. Plain JavaScript so that
 * the same file runs from the sources (tests) and from dist (tsup copies it).
 *
 * Protocol (as the SQLite thread's): the parent posts { id, rows } (BatchRows of click-rows.ts)
 * and the thread answers { id } once the batch is committed, or { id, error: { message, code } }
 * once it was rolled back; { close: true } ends the pool and the thread. Batches may overlap (two
 * connections): the counter rows are updated last and in key order, so two batches never deadlock.
 * Each batch is one call of a SQL function, in one round trip.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';

/** @type {{ connectionString: string, schema?: string, connections: number, customerColumns: string[], eventColumns: string[], outboxColumns: string[] }} */
const { connectionString, schema, connections, customerColumns, eventColumns, outboxColumns } = workerData;

/** Column types of the function's array parameters; every other column of these tables is text. */
/** @type {Record<string, string>} */
const TYPES = {
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

// The schema is a startup parameter of each connection, so it holds from its first statement. A
// `set search_path` sent on the pool's `connect` event ran beside the batch's own statement (node-pg
// warns that pg 9 refuses two at once), and had it failed the batches would have gone to another
// schema. PostgreSQL splits `options` on spaces, with backslash escapes.
const startup = schema ? { options: `-c search_path=${pg.escapeIdentifier(schema).replace(/[\\ ]/g, (c) => `\\${c}`)}` } : {};
const pool = new pg.Pool({ connectionString, max: connections, connectionTimeoutMillis: 10_000, ...startup });
// A connection that fails while idle is dropped by the pool; the next batch opens a new one.
pool.on('error', () => undefined);

/**
 * `reftrack_record_clicks_v3` (migration 20261125160000_stats_rollups) writes a whole batch in one statement, so
 * one round trip commits it; the arguments are the columns as typed arrays, then the link and the
 * partner-program increments, which the batcher sorted by key (so two batches lock the counter
 * rows in the same order and never deadlock), then the batch's outbox rows (its `clicks.recorded`
 * events), which commit with its clicks, then rollup rows — always none now: the batch's clicks
 * reach the rollups through its outbox rows (jobs/stats-clicks.ts), and version 3 stays the
 * function called so that no migration is needed and a server of the previous release can run
 * beside this one during a deploy.
 */
/** Version 3's rollup parameters (migration 20261125160000_stats_rollups), always passed empty. */
const ROLLUP_PARAMETERS = [
  ['r_program_id', 'int4'], ['r_span', 'int2'], ['r_bucket', 'int4'], ['r_partner_id', 'int4'], ['r_link_id', 'int4'],
  ['r_dim', 'text'], ['r_value', 'text'], ['r_currency', 'text'], ['r_clicks', 'int8'], ['r_unique_clicks', 'int8'], ['r_bot_clicks', 'int8'],
];
/** The function's parameters, named after the columns, in the order of the values below. */
const PARAMETERS = [
  ...customerColumns.map((c) => [`c_${c}`, TYPES[c] ?? 'text']),
  ...eventColumns.map((c) => [`e_${c}`, TYPES[c] ?? 'text']),
  ['l_id', 'int4'], ['l_n', 'int8'], ['l_at', 'int8'],
  ['p_partner_id', 'int4'], ['p_program_id', 'int4'], ['p_n', 'int8'], ['p_at', 'int8'],
  ...outboxColumns.map((c) => [`o_${c}`, TYPES[c] ?? 'text']),
  ...ROLLUP_PARAMETERS,
];
// Named arguments: a column list that no longer matches the function fails loudly instead of
// writing values into the wrong columns.
const RECORD_CLICKS = {
  name: 'rt_record_clicks_v3',
  text: `select reftrack_record_clicks_v3(${PARAMETERS.map(([name, type], i) => `${name} => $${i + 1}::${type}[]`).join(', ')})`,
};

/** @param {unknown[][]} rows @param {number} width the rows' values as one array per column */
const columnsOf = (rows, width) => Array.from({ length: width }, (_, i) => rows.map((r) => r[i] ?? null));

/**
 * @typedef {object} BatchRows
 * @property {unknown[][]} customers
 * @property {unknown[][]} events
 * @property {unknown[][]} outbox
 * @property {Array<{ id: number, n: number, at: number }>} links
 * @property {Array<{ partnerId: number, programId: number, n: number, at: number }>} enrollments
 * @param {BatchRows} rows
 */
async function writeBatch({ customers, events, outbox, links, enrollments }) {
  await pool.query({
    ...RECORD_CLICKS,
    values: [
      ...columnsOf(customers, customerColumns.length),
      ...columnsOf(events, eventColumns.length),
      links.map((l) => l.id),
      links.map((l) => l.n),
      links.map((l) => l.at),
      enrollments.map((e) => e.partnerId),
      enrollments.map((e) => e.programId),
      enrollments.map((e) => e.n),
      enrollments.map((e) => e.at),
      ...columnsOf(outbox, outboxColumns.length),
      ...ROLLUP_PARAMETERS.map(() => []),
    ],
  });
}

const port = parentPort;
if (!port) throw new Error('postgres-click-writer.worker.mjs runs as a worker thread');
port.on('message', (/** @type {{ id: number, rows: BatchRows } | { close: true }} */ message) => {
  if ('close' in message) {
    void pool.end().finally(() => port.close());
    return;
  }
  const { id, rows } = message;
  writeBatch(rows).then(
    () => port.postMessage({ id }),
    (err) => port.postMessage({ id, error: { message: String(err?.message ?? err), code: err?.code } }),
  );
});
