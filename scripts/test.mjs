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
// The failures are named again after the totals: a CI log is often read from its tail, and turbo's
// output of a long suite pushes vitest's own failure listing far above it.
const failures = [];
for (const file of fs.readdirSync(reportDir)) {
  const report = JSON.parse(fs.readFileSync(path.join(reportDir, file), 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  for (const suite of report.testResults ?? []) {
    const where = path.relative(process.cwd(), suite.name ?? file);
    const failedTests = (suite.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failedTests) failures.push(`${where} > ${t.fullName}\n      ${firstLine(t.failureMessages)}`);
    if (suite.status === 'failed' && failedTests.length === 0) failures.push(`${where}\n      ${firstLine([suite.message])}`);
  }
}
fs.rmSync(reportDir, { recursive: true, force: true });
console.log(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
for (const failure of failures) console.log(`  failed: ${failure}`);

function firstLine(messages) {
  const text = (messages ?? []).find((m) => typeof m === 'string' && m.trim() !== '') ?? '(no message)';
  return text.trim().split('\n')[0].slice(0, 300);
}
process.exit(test.status === 0 && failed === 0 && passed > 0 ? 0 : 1);
