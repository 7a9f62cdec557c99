/**
 * The operator command's operations (issue 22, docs/operator.md): `migrate status`, a truthful
 * `migrate`, `backup`, and `start` waiting for its database. The backup under load and its
 * restore are in the reliability suite (reliability/backup.test.ts).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dbKind, type TestDatabase } from './helpers/index.js';
import { TEST_ENCRYPTION_KEY } from './helpers/test-server.js';
import { freePortForTest } from './helpers/free-port.js';

const run = promisify(execFile);
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const MIGRATIONS = fs.readdirSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations')).filter((f) => /^\d{14}_.+\.js$/.test(f)).sort();

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.drop());

async function operator(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'info', ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...env } });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe(`[${dbKind}] upgrades: migrate and migrate status`, () => {
  it('migrate status on an empty database lists every migration as pending and exits 3', async () => {
    const out = await operator(['migrate', 'status']);
    expect(out.code).toBe(3);
    expect(out.stdout).toContain(`0 applied, ${MIGRATIONS.length} pending`);
    for (const name of MIGRATIONS) expect(out.stdout).toContain(`pending  ${name}`);
  });

  it('migrate says how many it applied and which, then "up to date" the next time', async () => {
    const first = await operator(['migrate']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`applied ${MIGRATIONS.length} migrations: ${MIGRATIONS.join(', ')}`);
    const second = await operator(['migrate']);
    expect(second.stdout).toContain('migrations: up to date, none applied');
    expect(second.stdout).not.toContain('applied 1');
  });

  it('migrate status after migrate: everything applied, exit 0', async () => {
    const out = await operator(['migrate', 'status']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(`${MIGRATIONS.length} applied, 0 pending`);
  });
});

describe(`[${dbKind}] backups`, () => {
  it(dbKind === 'sqlite' ? 'backup --out writes a database that opens and holds the data' : 'backup on PostgreSQL points to pg_dump with one clear line', async () => {
    const out = path.join(path.dirname(database.url.replace(/^sqlite:/, '')), 'copy.db');
    const res = await operator(['backup', '--out', dbKind === 'sqlite' ? out : '/tmp/never-written.db']);
    if (dbKind === 'postgres') {
      expect(res.code).toBe(2);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      expect(res.stderr).toContain('pg_dump');
      return;
    }
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^backed up .* to .*copy\.db: \d+ pages, \d+ bytes, in \d+ ms$/m);
    const status = await operator(['migrate', 'status'], { DATABASE_URL: `sqlite:${out}` });
    expect(status.stdout).toContain(`${MIGRATIONS.length} applied, 0 pending`);
    // It never overwrites a file.
    const again = await operator(['backup', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('exists');
  });
});

describe(`[${dbKind}] start waits for its database`, () => {
  it('retries an unreachable database with back-off in JSON lines, then gives up after DATABASE_WAIT_MS with a JSON line', async () => {
    const deadPort = await freePortForTest();
    const started = Date.now();
    const out = await operator(['start'], { DATABASE_URL: `postgres://postgres@127.0.0.1:${deadPort}/test`, DATABASE_WAIT_MS: '1500', PORT: '0' });
    const took = Date.now() - started;
    expect(out.code).toBe(1);
    expect(took).toBeGreaterThanOrEqual(1_000);
    const lines = out.stdout.trim().split('\n');
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; attempt?: number; retryInMs?: number });
    const waits = parsed.filter((l) => l.msg === 'database unreachable at start: waiting');
    expect(waits.length).toBeGreaterThanOrEqual(2);
    expect(waits.map((w) => w.retryInMs)).toEqual(waits.map((_, i) => Math.min(250 * 2 ** i, 5000)));
    expect(parsed.at(-1)!.msg).toBe('reftrack-server could not start');
    expect(out.stderr).toBe('');
  });
});
