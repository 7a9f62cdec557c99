// @ts-check
/**
 * The click writer thread (PostgreSQL): commits the click route's group-committed batches on
 * connections of its own, so that building the statements, the socket writes of every round trip
 * and the waits for them happen beside the event loop instead of on it. Plain JavaScript so that
 * the same file runs from the sources (tests) and from dist (tsup copies it).
 *
 * Protocol (as the SQLite thread's): the parent posts { id, rows } (BatchRows of click-batcher.ts)
 * and the thread answers { id } once the batch is committed, or { id, error: { message, code } }
 * once it was rolled back; { close: true } ends the pool and the thread. Batches may overlap (two
 * connections): the counter rows are updated last and in key order, so two batches never deadlock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';

/** @type {{ connectionString: string, schema?: string, connections: number, customerColumns: string[], eventColumns: string[] }} */
const { connectionString, schema, connections, customerColumns, eventColumns } = workerData;

/** Column types for `unnest`; every other column of these tables is text. */
/** @type {Record<string, string>} */
const TYPES = {
  program_id: 'int4',
  partner_id: 'int4',
  link_id: 'int4',
  is_test: 'bool',
  click_at: 'int8',
  click_timestamp: 'int8',
  created_at: 'int8',
};

const pool = new pg.Pool({ connectionString, max: connections, connectionTimeoutMillis: 10_000 });
// A connection that fails while idle is dropped by the pool; the next batch opens a new one.
pool.on('error', () => undefined);
if (schema) pool.on('connect', (client) => void client.query(`set search_path to ${pg.escapeIdentifier(schema)}`).catch(() => undefined));

/**
 * @param {string} table
 * @param {string[]} columns
 */
function insertText(table, columns) {
  const casts = columns.map((c, i) => `$${i + 1}::${TYPES[c] ?? 'text'}[]`).join(', ');
  return `insert into ${table} (${columns.join(', ')}) select * from unnest(${casts})`;
}

// Named statements: node-postgres prepares each once per connection and reuses its plan.
const STATEMENTS = {
  customers: { name: 'rt_click_customers', text: insertText('customers', customerColumns) },
  events: { name: 'rt_click_events', text: insertText('click_events', eventColumns) },
  link: { name: 'rt_click_link', text: 'update referral_links set clicks = clicks + $1, last_clicked = greatest(coalesce(last_clicked, 0), $2) where id = $3' },
  enrollment: {
    name: 'rt_click_enrollment',
    text: 'update partner_programs set clicks = clicks + $1, last_clicked_at = greatest(coalesce(last_clicked_at, 0), $2) where partner_id = $3 and program_id = $4',
  },
};

/**
 * One array parameter per column.
 * @param {unknown[][]} rows
 * @param {number} width
 */
const columnsOf = (rows, width) => Array.from({ length: width }, (_, i) => rows.map((r) => r[i] ?? null));

/**
 * @typedef {object} BatchRows
 * @property {unknown[][]} customers
 * @property {unknown[][]} events
 * @property {Array<{ id: number, n: number, at: number }>} links
 * @property {Array<{ partnerId: number, programId: number, n: number, at: number }>} enrollments
 */

/** @param {BatchRows} rows */
async function writeBatch({ customers, events, links, enrollments }) {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    if (customers.length > 0) await client.query({ ...STATEMENTS.customers, values: columnsOf(customers, customerColumns.length) });
    await client.query({ ...STATEMENTS.events, values: columnsOf(events, eventColumns.length) });
    for (const { id, n, at } of links) await client.query({ ...STATEMENTS.link, values: [n, at, id] });
    for (const { partnerId, programId, n, at } of enrollments) await client.query({ ...STATEMENTS.enrollment, values: [n, at, partnerId, programId] });
    await client.query('commit');
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    client.release(broken);
  }
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
