// Runs the server suite once per database engine (SQLite, then PostgreSQL), as CI requires.
// Outside CI an unreachable PostgreSQL skips its run with a notice; with CI=true it fails.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

const CANDIDATES = [process.env.TEST_POSTGRES_URL, 'postgres://postgres@127.0.0.1:5432/test', 'postgres://root@127.0.0.1:5432/test'].filter(Boolean);

async function postgresReachable() {
  for (const url of CANDIDATES) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.end();
      return true;
    } catch {
      await client.end().catch(() => undefined);
    }
  }
  return false;
}

const engines = (process.env.TEST_DBS ?? 'sqlite,postgres').split(',');
const extra = process.argv.slice(2);
let failed = false;
for (const engine of engines) {
  if (engine === 'postgres' && process.env.CI !== 'true' && !(await postgresReachable())) {
    console.log('\n=== PostgreSQL at 127.0.0.1:5432 (database test) is unreachable: skipping the PostgreSQL run (CI=true would fail) ===');
    continue;
  }
  console.log(`\n=== server suite on ${engine} ===`);
  const res = spawnSync('pnpm', ['exec', 'vitest', 'run', ...extra], { stdio: 'inherit', env: { ...process.env, TEST_DB: engine } });
  if (res.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
