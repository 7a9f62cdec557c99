/**
 * The WAL checkpointer thread (src/db/sqlite-checkpointer.worker.mjs) that the SQLite click writer
 * thread starts: with the automatic checkpoint off, the WAL file must still come back under its
 * bound after many writes, also after a long read kept SQLite from rewinding it. A size, not a
 * time: each check waits for the checkpointer's next passes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startCheckpointer } from '../src/db/sqlite-checkpoints.mjs';
import { writeLockFor } from '../src/db/sqlite-write-lock.js';

interface Statement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}
/** better-sqlite3 has no types here; the few calls this test makes. */
interface SqliteDb {
  pragma(source: string, options?: { simple: boolean }): unknown;
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction(fn: () => void): () => void;
  close(): void;
  readonly open: boolean;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string, options?: { readonly?: boolean }) => SqliteDb;

const MB = 1024 * 1024;
const LIMIT = 1 * MB;

const opened: Array<() => void> = [];
afterEach(() => {
  for (const close of opened.splice(0).reverse()) close();
});

function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-wal-'));
  const filename = path.join(dir, 'test.db');
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec('create table t (id integer primary key, v blob)');
  const lock = writeLockFor(filename);
  const checkpoints = startCheckpointer(db, { filename, lock: lock.buffer, walLimitBytes: LIMIT });
  opened.push(() => {
    checkpoints.close();
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const update = db.prepare('insert into t (id, v) values (?, ?) on conflict (id) do update set v = excluded.v');
  /** `n` transactions of 16 rows of 16 KB each (about 70 pages of WAL frames each), under the write lock as the click lane writes. */
  const write = async (n: number) => {
    for (let i = 0; i < n; i++) {
      await lock.acquire();
      try {
        db.transaction(() => {
          for (let r = 0; r < 16; r++) update.run(r, Buffer.alloc(16 * 1024, i % 256));
        })();
      } finally {
        lock.release();
      }
      // Lets the checkpointer's passes interleave with the writes, as between click batches.
      if (i % 20 === 0) await new Promise((r) => setTimeout(r, 1));
    }
  };
  const walBytes = () => fs.statSync(`${filename}-wal`).size;
  return { filename, db, write, walBytes };
}

describe('WAL checkpointer thread', () => {
  it('turns the connection\'s automatic checkpoint off and keeps the WAL file under its bound after 20 MB of writes', async () => {
    const { db, write, walBytes } = setup();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await write(300);
    await vi.waitFor(() => expect(walBytes()).toBeLessThanOrEqual(LIMIT), { timeout: 15_000, interval: 25 });
    expect(db.prepare('select count(*) as n from t').get()).toEqual({ n: 16 });
  });

  it('brings the WAL back under its bound once a long read that kept it from rewinding ends', async () => {
    const { filename, write, walBytes } = setup();
    const reader = new Database(filename, { readonly: true });
    opened.push(() => reader.close());
    reader.exec('begin');
    reader.prepare('select count(*) from t').get();
    await write(150);
    // The reader's snapshot pins the WAL: it cannot be rewound, whatever is checkpointed.
    expect(walBytes()).toBeGreaterThan(LIMIT);
    reader.exec('commit');
    await write(5);
    await vi.waitFor(() => expect(walBytes()).toBeLessThanOrEqual(LIMIT), { timeout: 15_000, interval: 25 });
  });
});
