/**
 * `reftrack-server backup --out FILE`: an online copy of a SQLite database through SQLite's backup
 * API, which copies pages while the server keeps writing (WAL mode) and yields a consistent
 * database as of one moment. The copy is written next to FILE and renamed into place, so a
 * half-written backup never carries the final name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

/** The part of better-sqlite3 used here (the package ships no types). */
interface SqliteDb {
  pragma(source: string, options?: { simple: boolean }): unknown;
  backup(destination: string, options?: { progress?: (info: { totalPages: number; remainingPages: number }) => number }): Promise<{ totalPages: number; remainingPages: number }>;
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => SqliteDb;

export class BackupError extends Error {}

export async function backupSqlite(source: string, out: string): Promise<{ pages: number; bytes: number; ms: number }> {
  const started = Date.now();
  if (!fs.existsSync(source)) throw new BackupError(`no database at ${source}`);
  const target = path.resolve(out);
  if (fs.existsSync(target)) throw new BackupError(`${out} exists; backup does not overwrite a file`);
  const partial = `${target}.partial-${process.pid}`;
  const db = new Database(source, { fileMustExist: true });
  let pages = 0;
  try {
    // Writers wait up to 5 s for the lock rather than failing while a step reads.
    db.pragma('busy_timeout = 5000');
    // The first step copies 100 pages; every later step the rest at once, inside one read
    // transaction, so a busy server cannot make the copy restart again and again.
    const result = await db.backup(partial, { progress: () => 1_000_000 });
    pages = result.totalPages;
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }
  // The copy is checked before it takes the final name.
  const check = new Database(partial, { readonly: true });
  try {
    const ok = check.pragma('integrity_check', { simple: true });
    if (ok !== 'ok') throw new BackupError(`the copy failed its integrity check: ${String(ok)}`);
  } finally {
    check.close();
  }
  fs.renameSync(partial, target);
  return { pages, bytes: fs.statSync(target).size, ms: Date.now() - started };
}
