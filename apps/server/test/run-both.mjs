// Runs the server suite once per database engine (SQLite, then PostgreSQL), as CI requires.
import { spawnSync } from 'node:child_process';

const engines = (process.env.TEST_DBS ?? 'sqlite,postgres').split(',');
const extra = process.argv.slice(2);
let failed = false;
for (const engine of engines) {
  console.log(`\n=== server suite on ${engine} ===`);
  const res = spawnSync('pnpm', ['exec', 'vitest', 'run', ...extra], { stdio: 'inherit', env: { ...process.env, TEST_DB: engine } });
  if (res.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
