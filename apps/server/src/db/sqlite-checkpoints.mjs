// @ts-check
/**
 * Who checkpoints the WAL while the click writer thread runs: the checkpointer thread
 * (sqlite-checkpointer.worker.mjs), not the connection that happens to commit. The writer thread's
 * connection has SQLite's automatic checkpoint turned off for as long as the checkpointer runs,
 * and back on (SQLite's default, 1,000 pages) should the checkpointer thread end, so the WAL is
 * never left without a checkpoint. Imported by the writer thread (bundled into it).
 */
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/** The WAL's bound by default: past it the checkpointer truncates it under the write lock. */
export const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;

/** The checkpointer's file: a sibling in the sources (.mjs) and in dist (.js, tsup's entry). */
function checkpointerFile() {
  const found = ['./sqlite-checkpointer.worker.mjs', './sqlite-checkpointer.worker.js'].map((f) => new URL(f, import.meta.url)).find((u) => fs.existsSync(u));
  if (!found) throw new Error('sqlite-checkpointer.worker not found beside the click writer thread');
  return found;
}

/**
 * @param {import('better-sqlite3').Database} db  the writer thread's connection
 * @param {{ filename: string, lock: SharedArrayBuffer, walLimitBytes?: number }} o
 * @returns {{ close: () => void }}
 */
export function startCheckpointer(db, { filename, lock, walLimitBytes = WAL_LIMIT_BYTES }) {
  const worker = new Worker(checkpointerFile(), { workerData: { filename, lock, walLimitBytes, trace: process.env.REFTRACK_TRACE_CHECKPOINTS === '1' } });
  db.pragma('wal_autocheckpoint = 0');
  let closing = false;
  worker.on('error', () => {});
  worker.on('exit', () => {
    if (!closing && db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
  });
  return {
    close() {
      closing = true;
      worker.postMessage({ close: true });
    },
  };
}
