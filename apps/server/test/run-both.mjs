// Runs the server suite once per database engine (SQLite, then PostgreSQL), as CI requires.
// Outside CI an unreachable PostgreSQL skips its run with a notice; with CI=true it fails.
import { spawnSync } from 'node:child_process';
import { findTestPostgres } from './postgres-url.mjs';

const engines = (process.env.TEST_DBS ?? 'sqlite,postgres').split(',');
const extra = process.argv.slice(2);
let failed = false;
for (const engine of engines) {
  if (engine === 'postgres' && process.env.CI !== 'true' && !(await findTestPostgres())) {
    console.log('\n=== PostgreSQL at 127.0.0.1:5432 (database test) is unreachable: skipping the PostgreSQL run (CI=true would fail) ===');
    continue;
  }
  console.log(`\n=== server suite on ${engine} ===`);
  const res = spawnSync('pnpm', ['exec', 'vitest', 'run', ...extra], { stdio: 'inherit', env: { ...process.env, TEST_DB: engine } });
  if (res.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
