// `pnpm test` (and `pnpm test:reliability`): builds, runs every package's suite (the server's on SQLite and PostgreSQL) one
// package at a time, then prints one closing line with the totals of all vitest runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// `--task NAME` runs another turbo task (e.g. test:reliability) with the same closing line.
const args = process.argv.slice(2);
const taskAt = args.indexOf('--task');
const task = taskAt >= 0 ? args.splice(taskAt, 2)[1] : 'test';
const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-test-report-'));
const env = { ...process.env, REFTRACK_TEST_REPORT_DIR: reportDir };
const turbo = (args) => spawnSync('pnpm', ['exec', 'turbo', ...args, '--env-mode=loose'], { stdio: 'inherit', env });

const build = turbo(['run', 'build']);
if (build.status !== 0) process.exit(build.status ?? 1);
const test = turbo(['run', task, '--concurrency=1', '--continue', ...args]);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of fs.readdirSync(reportDir)) {
  const report = JSON.parse(fs.readFileSync(path.join(reportDir, file), 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
fs.rmSync(reportDir, { recursive: true, force: true });
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(test.status === 0 && failed === 0 && passed > 0 ? 0 : 1);
