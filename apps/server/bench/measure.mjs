/**
 * One measured run and what is derived from it: the warm-up, the CPU meter, the noise guard
 * (other processes on a small shared host), the result row, and the checks of the database
 * against the acknowledged answers.
 */
import os from 'node:os';
import { cpuMeter, round, waitForQuietHost } from './processes.mjs';
import { compareStored } from './write-checks.mjs';

/** @typedef {import('./report.mjs').Row} Row */
/** @typedef {import('./load.mjs').LoadResult} LoadResult */
/** @typedef {Awaited<ReturnType<typeof import('./db.mjs').writeCounts>>} Counts */

/**
 * One result row from a load run and the CPU meter around it.
 * @param {string} db @param {string} route @param {LoadResult} r
 * @param {ReturnType<ReturnType<typeof cpuMeter>['stop']>} cpu
 * @returns {Row}
 */
export function makeRow(db, route, r, cpu) {
  /** @type {Row} */
  const row = {
    db,
    route,
    tool: r.tool,
    durationS: r.durationS,
    requests: r.requests,
    ok: r.ok,
    rps: r.rps,
    okRps: round(r.ok / Math.max(0.001, r.durationS), 0),
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    p999Ms: r.p999Ms,
    maxMs: r.maxMs,
    non2xx: r.non2xx,
    statusCodes: r.statusCodes,
    socketErrors: r.socketErrors,
    timeouts: r.timeouts,
    ratioToBare: null,
    ratioToWrkBare: null,
    rounds: null,
    serverCpuS: cpu.serverCpuS,
    cpuMsPerRequest: round((1000 * cpu.serverCpuS) / Math.max(1, r.requests), 3),
    mainThreadMsPerRequest: round((1000 * cpu.serverMainThreadCpuS) / Math.max(1, r.requests), 3),
    postgresCpuS: cpu.postgresCpuS,
    loadgenCpuS: r.tool === 'wrk' ? r.loadgenCpuS : cpu.benchProcessCpuS,
    hostBusyPct: cpu.hostBusyPct,
    otherCpuS: cpu.otherCpuS,
    verify: null,
    notes: [],
    targets: [],
    valid: r.non2xx === 0 && r.socketErrors === 0 && r.timeouts === 0 && r.ok > 0,
  };
  if (cpu.perProcess.length > 1) {
    row.notes.push(`CPU per server process: ${cpu.perProcess.map((p) => `pid ${p.pid} ${p.cpuS} s (event loop ${p.mainThreadCpuS} s)`).join(', ')}`);
  }
  noteNoise(row, os.cpus().length);
  return row;
}

/**
 * Notes a run during which other processes used a noticeable share of the CPU.
 * @param {Row} row @param {number} cores
 */
function noteNoise(row, cores) {
  const share = row.otherCpuS / Math.max(0.001, row.durationS * cores);
  if (share > 0.05) row.notes.push(`NOISY: other processes on the host used ${row.otherCpuS} CPU s (${Math.round(100 * share)}% of the machine) during the run`);
}

/** A run during which other processes used more than this share of the machine is measured again (when allowed). */
const NOISE_LIMIT = 0.1;

/**
 * Runs an optional warm-up (not measured, but its answers are counted for the checks), then the
 * measured run with a CPU meter around it. On a shared machine another process's build or test
 * run would be measured as the server's slowness, so each attempt first waits for a quiet host,
 * and a run that was disturbed anyway is repeated up to `retries` times; the least disturbed
 * attempt is reported. Retries are only allowed where inputs are not used up (click runs).
 * @param {{ pids: () => number[] }} server
 * @param {(seconds: number, warm: boolean) => Promise<LoadResult>} load
 * @param {number} warmup @param {number} duration @param {number} [retries]
 * @param {(last: LoadResult) => boolean} [canRetry]  whether inputs are left for another attempt
 */
export async function measured(server, load, warmup, duration, retries = 0, canRetry = () => true) {
  /** @type {LoadResult[]} every run, warm-ups included: the database checks count them all */
  const all = [];
  /** @type {{ warm?: LoadResult, result: LoadResult, cpu: ReturnType<ReturnType<typeof cpuMeter>['stop']>, share: number } | undefined} */
  let best;
  let attempts = 0;
  for (; attempts <= retries; attempts++) {
    const quiet = await waitForQuietHost();
    if (!quiet.quiet) console.log(`  WARNING: host still ${quiet.busyPct}% busy with other work after waiting ${quiet.waitedS} s; measuring anyway`);
    else if (quiet.waitedS > 1) console.log(`  (waited ${quiet.waitedS} s for other work on the host to finish)`);
    /** @type {LoadResult | undefined} */
    let warm;
    if (warmup > 0) {
      warm = await load(warmup, true);
      all.push(warm);
    }
    const meter = cpuMeter(server.pids);
    const result = await load(duration, false);
    all.push(result);
    const cpu = meter.stop();
    const share = cpu.otherCpuS / Math.max(0.001, result.durationS * os.cpus().length);
    if (!best || share < best.share) best = { warm, result, cpu, share };
    if (share <= NOISE_LIMIT) break;
    if (attempts < retries && !canRetry(result)) {
      console.log(`  other processes used ${Math.round(100 * share)}% of the machine during the run; not enough inputs left to measure again`);
      break;
    }
    if (attempts < retries) console.log(`  other processes used ${Math.round(100 * share)}% of the machine during the run: measuring again`);
  }
  const chosen = /** @type {NonNullable<typeof best>} */ (best);
  return { ...chosen, all, attempts: Math.min(attempts + 1, retries + 1) };
}

/**
 * Acknowledged answers and the most that may have been committed without an answer reaching the
 * load generator (requests in flight at each cut-off: wrk cannot say, so one per connection).
 * @param {Array<LoadResult>} runs @param {number} connections
 */
export function ackedAndSlack(runs, connections) {
  return {
    acked: runs.reduce((a, r) => a + r.ok, 0),
    slack: runs.reduce((a, r) => a + (r.tool === 'wrk' ? connections : r.sent - r.requests), 0),
  };
}

/**
 * Every acknowledged click must be committed (the design's group commit answers only after the
 * batch committed). Requests in flight when the load generator stopped may have been committed
 * too: at most one per connection per run (wrk cannot say how many; autocannon can).
 * @param {Row} row
 * @param {Counts} before @param {Counts} after
 * @param {Array<LoadResult>} runs  every run against this database state, warm-ups included
 * @param {number} connections
 */
export function verifyClicks(row, before, after, runs, connections) {
  const { acked, slack } = ackedAndSlack(runs, connections);
  verifyStored(row, {
    noun: 'clicks',
    acked,
    slack,
    grew: [
      ['click_events', after.clickEvents - before.clickEvents],
      ['customers', after.customers - before.customers],
      ['referral_links.clicks', after.linkClicks - before.linkClicks],
    ],
  });
}

/**
 * Sets the row's check from {@link compareStored}; a mismatch makes the run, and the benchmark,
 * fail (write-checks.mjs).
 * @param {Row} row @param {Parameters<typeof compareStored>[0]} o
 */
export function verifyStored(row, o) {
  row.verify = compareStored(o);
  if (!row.verify.ok) {
    row.valid = false;
    console.error(`\n!! ${row.db} ${row.route}: ${row.verify.text}\n`);
  }
}

/** @param {LoadResult | undefined} w */
export const warmNote = (w) => (w && (w.non2xx || w.socketErrors || w.timeouts) ? [`warm-up had ${w.non2xx} non-2xx, ${w.socketErrors} socket errors, ${w.timeouts} timeouts`] : []);

/**
 * The middle item by `rps` (the upper middle of an even count): the reported run of repeated runs.
 * @template T
 * @param {T[]} items @param {(item: T) => number} rps
 * @returns {T}
 */
export function medianBy(items, rps) {
  return [...items].sort((a, b) => rps(a) - rps(b))[Math.floor(items.length / 2)];
}
