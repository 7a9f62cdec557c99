// Reporters shared by every package: the default console output, plus a JSON report that
// scripts/test.mjs sums into the run's closing line when REFTRACK_TEST_REPORT_DIR is set.
import path from 'node:path';

export function reporters(name: string): Array<string | [string, Record<string, unknown>]> {
  const dir = process.env.REFTRACK_TEST_REPORT_DIR;
  if (!dir) return ['default'];
  const suffix = process.env.TEST_DB ? `-${process.env.TEST_DB}` : '';
  return ['default', ['json', { outputFile: path.join(dir, `${name}${suffix}.json`) }]];
}
