/**
 * The demo program's key survives restarts: `pnpm demo` prints the same key every time, so the SDK,
 * CLI and CI set-ups made with it keep working. Keys are stored hashed, so the plain text lives in
 * a file beside the database, readable by its owner only (0600): the same protection as the
 * database file itself holds for everything else of a local demo. The file is reused only while
 * its key still matches the program's hash and is not retired; otherwise (first run, a key
 * regenerated in the dashboard, `--rotate-demo-key`) a new key is issued and the file rewritten.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import type { DatabaseConfig } from '../config.js';
import { sha256Hex } from '../auth/secret-hash.js';
import { regenerateProgramKey } from '../ops/program-keys.js';

const PRIVATE_FILE_MODE = 0o600;
const POSIX = process.platform !== 'win32';

/** `<database file>.demo-key` for SQLite; `.reftrack/demo-key.<schema>` in the working folder for PostgreSQL. */
export function demoKeyFile(database: DatabaseConfig, cwd = process.cwd()): string {
  if (database.client === 'sqlite') return `${database.filename}.demo-key`;
  return path.join(cwd, '.reftrack', `demo-key.${database.schema ?? 'public'}`);
}

function readKeyFile(file: string): string | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  // A copy or an editor may have loosened the mode; the key is a credential.
  if (POSIX && (fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, PRIVATE_FILE_MODE);
  const key = text.trim();
  return /^aff_[A-Za-z0-9]{16,}$/.test(key) ? key : null;
}

/** Writes the key through a temporary file and a rename: a crash never leaves half a key behind. */
function writeKeyFile(file: string, key: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${key}\n`, { mode: PRIVATE_FILE_MODE });
  fs.renameSync(tmp, file);
  if (POSIX) fs.chmodSync(file, PRIVATE_FILE_MODE);
}

export interface DemoKey {
  apiKey: string;
  /** The key of the last run, read back from the file. */
  kept: boolean;
  file: string;
}

export async function demoProgramKey(db: Knex, programId: number, file: string, options: { rotate: boolean; now: number }): Promise<DemoKey> {
  if (!options.rotate) {
    const saved = readKeyFile(file);
    if (saved) {
      const row = await db('program_keys').where({ program_id: programId }).first('key_hash', 'rotation_deadline');
      const retired = row?.rotation_deadline != null && Number(row.rotation_deadline) <= options.now;
      if (row && row.key_hash === sha256Hex(saved) && !retired) return { apiKey: saved, kept: true, file };
    }
  }
  const apiKey = await regenerateProgramKey(db, programId, options.now);
  writeKeyFile(file, apiKey);
  return { apiKey, kept: false, file };
}
