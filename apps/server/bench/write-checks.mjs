/**
 * The benchmark's proof that it measured committed work: after each run the rows in the database
 * must match the acknowledged answers. A run whose stored rows differ is not a slow run but a lost
 * or invented write, so it fails the whole benchmark loudly (its own exit code), not only its row.
 * Kept apart from the load code so that a self-test can feed it a mismatch
 * (test/bench-write-checks.test.ts).
 */

/** `pnpm bench`'s exit code when stored rows differ from acknowledged writes (1: another invalid run). */
export const STORED_MISMATCH_EXIT = 3;

/**
 * Compares what the database gained with what the load generator saw acknowledged. The first
 * table is the one each acknowledged request adds exactly one row to: it must have grown by the
 * acknowledged requests, plus at most `slack` requests that were in flight at a cut-off (committed,
 * but their answer never read). Every other table must have grown by exactly as much as the first.
 * @param {{ noun: string, acked: number, slack: number, grew: Array<[string, number]> }} o
 *   noun: what was acknowledged ("clicks"); grew: [table, growth], the first the one counted
 * @returns {{ ok: boolean, text: string }}
 */
export function compareStored({ noun, acked, slack, grew }) {
  const [[first, n], ...rest] = grew;
  const problems = [];
  if (n < acked) problems.push(`${acked - n} acknowledged ${noun} missing from ${first}`);
  if (n > acked + slack) problems.push(`${n - acked - slack} more rows in ${first} than acknowledged ${noun} and requests in flight`);
  for (const [table, m] of rest) if (m !== n) problems.push(`${table} +${m}, not +${n}`);
  const text = `${first} +${n} for ${acked} acknowledged ${noun} (≤ ${slack} more in flight at the cut-off); ${rest.map(([t, m]) => `${t} +${m}`).join('; ')}`;
  return problems.length ? { ok: false, text: `STORED ROWS DIFFER: ${problems.join('; ')} — ${text}` } : { ok: true, text };
}

/**
 * A banner for every run whose stored rows differed, or '' when all matched.
 * @param {Array<{ db: string, route: string, verify: { ok: boolean, text: string } | null }>} rows
 */
export function storedMismatchBanner(rows) {
  const bad = rows.filter((r) => r.verify && !r.verify.ok);
  if (bad.length === 0) return '';
  const bar = '#'.repeat(78);
  return [
    bar,
    '##  FAILED: STORED ROWS DIFFER FROM ACKNOWLEDGED WRITES',
    '##  an acknowledged request was not committed, or rows were written that no request asked for:',
    ...bad.map((r) => `##  ${r.db} ${r.route}: ${r.verify?.text}`),
    bar,
  ].join('\n');
}

/**
 * The benchmark's exit code: a stored-row mismatch above all, then any other invalid run.
 * @param {Array<{ valid: boolean, verify: { ok: boolean } | null }>} rows
 */
export function exitCode(rows) {
  if (rows.some((r) => r.verify && !r.verify.ok)) return STORED_MISMATCH_EXIT;
  return rows.every((r) => r.valid) ? 0 : 1;
}
