// @ts-check
/**
 * The click writer thread (SQLite): commits the click route's group-committed batches on a
 * connection of its own, so that the inserts and the commit run beside the event loop instead of on
 * it; the WAL checkpoints run in a thread of their own that this one starts (sqlite-checkpoints.mjs).
 * Plain JavaScript so that the same file runs from the sources (tests) and from dist (tsup copies it).
 *
 * Protocol: the parent posts { id, rows } (BatchRows of click-rows.ts); the thread answers
 * { id } once the batch is committed, or { id, error: { message, code } } once it was rolled
 * back; { close: true } closes the connection and ends the thread. Before each transaction it takes the write lock shared with the event loop's connection
 * (sqlite-write-lock.ts has the layout) and releases it after the commit or rollback.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { startCheckpointer } from './sqlite-checkpoints.mjs';

const LOCK_FREE = 0;
const LOCK_WRITER_THREAD = 2;
/** How long the thread lets a waiting event loop go first before it takes a free lock anyway. */
const YIELD_MS = 5;

/** @type {{ filename: string, lock: SharedArrayBuffer, walLimitBytes?: number, customerColumns: string[], eventColumns: string[], outboxColumns: string[] }} */
const { filename, lock, walLimitBytes, customerColumns, eventColumns, outboxColumns } = workerData;
const word = new Int32Array(lock);

const db = new Database(filename);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');
db.pragma('foreign_keys = ON');
// The WAL is checkpointed by a thread of its own, not inside this thread's commits.
const checkpoints = startCheckpointer(db, { filename, lock, walLimitBytes });

function acquire() {
  for (;;) {
    if (Atomics.load(word, 1) !== 0 && Atomics.load(word, 0) === LOCK_FREE) {
      // The event loop asked for the lock: give it a moment to take it.
      Atomics.wait(word, 0, LOCK_FREE, YIELD_MS);
    }
    if (Atomics.compareExchange(word, 0, LOCK_FREE, LOCK_WRITER_THREAD) === LOCK_FREE) return;
    const holder = Atomics.load(word, 0);
    if (holder !== LOCK_FREE) Atomics.wait(word, 0, holder);
  }
}

function release() {
  Atomics.store(word, 0, LOCK_FREE);
  Atomics.notify(word, 0);
}

/** @type {Map<string, import('better-sqlite3').Statement>} */
const statements = new Map();
/** @param {string} sql */
function statement(sql) {
  let stmt = statements.get(sql);
  if (!stmt) statements.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}

/**
 * better-sqlite3 binds numbers, strings, null and buffers; booleans are stored as 0/1 like knex
 * does. The row is this thread's own copy, so it is converted in place.
 * @param {unknown[]} row
 */
function bindable(row) {
  for (let i = 0; i < row.length; i++) {
    const v = row[i];
    if (typeof v === 'boolean') row[i] = v ? 1 : 0;
    else if (v === undefined) row[i] = null;
  }
  return row;
}

/**
 * @param {string} table
 * @param {string[]} columns
 * @param {unknown[][]} rows values in the order of `columns`
 */
function insertAll(table, columns, rows) {
  if (rows.length === 0) return;
  const stmt = statement(`insert into ${table} (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')})`);
  // Spread, not the array itself: better-sqlite3 reads an array argument's values one by one
  // through V8's property lookup, and the arguments of the call directly.
  for (const row of rows) stmt.run(...bindable(row));
}

const OUTBOX_PROGRAM_ID = outboxColumns.indexOf('program_id');
/**
 * The batch's outbox rows (one per program, usually one), each with its program's workspace read
 * by the insert itself. One prepared statement run per row, as the clicks' rows are: SQLite has no
 * round trips to save by putting them in one statement.
 * @param {unknown[][]} rows values in the order of `outboxColumns`
 */
function insertOutbox(rows) {
  if (rows.length === 0) return;
  const stmt = statement(`insert into outbox_events (${outboxColumns.join(', ')}, workspace_id) values (${outboxColumns.map(() => '?').join(', ')}, (select workspace_id from programs where id = ?))`);
  for (const row of rows) stmt.run(...row, row[OUTBOX_PROGRAM_ID]);
}

/**
 * @typedef {object} BatchRows
 * @property {unknown[][]} customers
 * @property {unknown[][]} events
 * @property {unknown[][]} outbox
 * @property {Array<{ id: number, n: number, at: number }>} links
 * @property {Array<{ partnerId: number, programId: number, n: number, at: number }>} enrollments
 */

const writeBatch = db.transaction(/** @param {BatchRows} rows */ ({ customers, events, outbox, links, enrollments }) => {
  insertAll('customers', customerColumns, customers);
  insertAll('click_events', eventColumns, events);
  insertOutbox(outbox);
  const link = statement('update referral_links set clicks = clicks + ?, last_clicked = max(coalesce(last_clicked, 0), ?) where id = ?');
  for (const { id, n, at } of links) link.run(n, at, id);
  const enrollment = statement('update partner_programs set clicks = clicks + ?, last_clicked_at = max(coalesce(last_clicked_at, 0), ?) where partner_id = ? and program_id = ?');
  for (const { partnerId, programId, n, at } of enrollments) enrollment.run(n, at, partnerId, programId);
});

const port = parentPort;
if (!port) throw new Error('sqlite-click-writer.worker.mjs runs as a worker thread');
port.on('message', (/** @type {{ id: number, rows: BatchRows } | { close: true }} */ message) => {
  if ('close' in message) {
    checkpoints.close();
    db.close();
    port.close();
    return;
  }
  const { id, rows } = message;
  acquire();
  try {
    writeBatch.immediate(rows);
    port.postMessage({ id });
  } catch (err) {
    const e = /** @type {{ message?: string, code?: string }} */ (err);
    port.postMessage({ id, error: { message: String(e?.message ?? err), code: e?.code } });
  } finally {
    release();
  }
});
