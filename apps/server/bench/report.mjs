/**
 * Targets, the printed table and the machine-readable result (bench-results/latest.json at the
 * repository root, which .gitignore already excludes).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The issue's targets. The lead and sale targets name no database, so they are checked on both.
 * Throughput targets are on 2xx answers per second.
 * @type {Array<{ id: string, db: 'sqlite' | 'postgres' | '*', route: string, text: string, pass: (r: Row) => boolean }>}
 */
export const TARGETS = [
  { id: 'click-ratio-sqlite', db: 'sqlite', route: 'click', text: 'click ≥ 55% of bare req/s', pass: (r) => (r.ratioToBare ?? 0) >= 0.55 },
  { id: 'click-p99-sqlite', db: 'sqlite', route: 'click', text: 'click p99 ≤ 15 ms, every round', pass: (r) => worstP99(r) <= 15 },
  { id: 'click-ratio-postgres', db: 'postgres', route: 'click', text: 'click ≥ 30% of bare req/s', pass: (r) => (r.ratioToBare ?? 0) >= 0.3 },
  { id: 'click-p99-postgres', db: 'postgres', route: 'click', text: 'click p99 ≤ 20 ms, every round', pass: (r) => worstP99(r) <= 20 },
  { id: 'lead-rps', db: '*', route: 'lead', text: 'lead ≥ 2,000/s', pass: (r) => r.okRps >= 2000 },
  { id: 'lead-p99', db: '*', route: 'lead', text: 'lead p99 < 100 ms', pass: (r) => r.p99Ms < 100 },
  { id: 'sale-rps', db: '*', route: 'sale', text: 'sale ≥ 1,000/s', pass: (r) => r.okRps >= 1000 },
  { id: 'sale-p99', db: '*', route: 'sale', text: 'sale p99 < 100 ms', pass: (r) => r.p99Ms < 100 },
  // The same PostgreSQL targets as the issue also wrote them: shares of the bare server under wrk.
  { id: 'lead-share-postgres', db: 'postgres', route: 'lead', text: 'lead ≥ 4% of bare (wrk)', pass: (r) => (r.ratioToWrkBare ?? 0) >= 0.04 },
  { id: 'sale-share-postgres', db: 'postgres', route: 'sale', text: 'sale ≥ 2% of bare (wrk)', pass: (r) => (r.ratioToWrkBare ?? 0) >= 0.02 },
];

/** The highest p99 of a row's rounds (its own p99 when it has none). @param {Row} r */
const worstP99 = (r) => Math.max(r.p99Ms, ...(r.rounds ?? []).map((x) => x.p99Ms));

/**
 * @typedef {object} Round  one click run and the bare run just before it
 * @property {number} round
 * @property {number} bareRps @property {number} bareP99Ms @property {number} bareP999Ms @property {number} bareOtherCpuS
 * @property {number} rps @property {number} p99Ms @property {number} p999Ms @property {number} maxMs @property {number} otherCpuS
 * @property {number} ratioToBare
 */

/**
 * @param {number} n @param {Row} bare
 * @param {import('./load.mjs').LoadResult} click @param {{ otherCpuS: number }} cpu
 * @returns {Round}
 */
export function roundOf(n, bare, click, cpu) {
  return {
    round: n,
    bareRps: bare.rps,
    bareP99Ms: bare.p99Ms,
    bareP999Ms: bare.p999Ms,
    bareOtherCpuS: bare.otherCpuS,
    rps: click.rps,
    p99Ms: click.p99Ms,
    p999Ms: click.p999Ms,
    maxMs: click.maxMs,
    otherCpuS: cpu.otherCpuS,
    ratioToBare: Math.round((1000 * click.rps) / Math.max(1, bare.rps)) / 1000,
  };
}

/**
 * @typedef {object} Row
 * @property {string} db            'bare', 'sqlite' or 'postgres'
 * @property {string} route
 * @property {string} tool
 * @property {number} durationS
 * @property {number} requests
 * @property {number} ok
 * @property {number} rps
 * @property {number} okRps
 * @property {number} p50Ms
 * @property {number} p99Ms
 * @property {number} p999Ms
 * @property {number} maxMs
 * @property {number} non2xx
 * @property {Record<string, number>} statusCodes
 * @property {number} socketErrors
 * @property {number} timeouts
 * @property {number | null} ratioToBare   req/s over the bare server's with the same tool in the same run
 * @property {number | null} ratioToWrkBare  lead and sale rows: 2xx answers a second over the bare server's under wrk in the same run (issue 25's shares)
 * @property {Round[] | null} rounds        click rows: each round beside its own bare run
 * @property {number} serverCpuS
 * @property {number} cpuMsPerRequest
 * @property {number} mainThreadMsPerRequest  CPU of the server processes' main threads (event loops) per answer
 * @property {number} postgresCpuS
 * @property {number} loadgenCpuS
 * @property {number} hostBusyPct
 * @property {number} otherCpuS     CPU seconds of other processes on the host during the run
 * @property {{ ok: boolean, text: string } | null} verify
 * @property {string[]} notes
 * @property {Array<{ id: string, text: string, pass: boolean }>} targets
 * @property {boolean} valid
 */

/** @param {Row} row */
export function checkTargets(row) {
  row.targets = TARGETS.filter((t) => t.route === row.route && (t.db === '*' || t.db === row.db)).map((t) => ({ id: t.id, text: t.text, pass: row.valid && t.pass(row) }));
}

/** @param {number} ratio */
export const fmtPct = (ratio) => `${(100 * ratio).toFixed(1)}%`;

const fmt = (n, d = 0) => (n === null || n === undefined || Number.isNaN(n) ? '–' : n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }));

/** @param {string[][]} rows */
function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i < 3 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** @param {Row[]} rows */
export function renderTable(rows) {
  const head = ['db', 'route', 'tool', 'req/s', 'p50 ms', 'p99 ms', 'p99.9 ms', 'non-2xx', 'x bare', 'srv CPU s', 'CPU ms/req', 'loop ms/req', 'pg CPU s', 'other CPU s', 'host busy'];
  const body = rows.map((r) => [
    r.db,
    r.route,
    r.tool,
    fmt(r.rps),
    fmt(r.p50Ms, 1),
    fmt(r.p99Ms, 1),
    fmt(r.p999Ms, 1),
    fmt(r.non2xx + r.socketErrors + r.timeouts),
    r.ratioToBare === null ? '' : `${fmt(100 * r.ratioToBare, 1)}%`,
    fmt(r.serverCpuS, 1),
    fmt(r.cpuMsPerRequest, 3),
    fmt(r.mainThreadMsPerRequest, 3),
    r.db === 'postgres' ? fmt(r.postgresCpuS, 1) : '',
    fmt(r.otherCpuS, 1),
    `${fmt(r.hostBusyPct, 0)}%`,
  ]);
  return table([head, ...body]);
}

/**
 * Every round of every click row: the bare run, the click run after it, their ratio and the other
 * processes' CPU during each (a noisy round shows there).
 * @param {Row[]} rows
 */
export function renderRounds(rows) {
  const head = ['db', 'round', 'bare req/s', 'bare p99', 'bare p99.9', 'bare other CPU s', 'click req/s', 'x bare', 'p99 ms', 'p99.9 ms', 'max ms', 'other CPU s'];
  const body = rows.flatMap((r) =>
    (r.rounds ?? []).map((x) => [r.db, String(x.round), fmt(x.bareRps), fmt(x.bareP99Ms, 1), fmt(x.bareP999Ms, 1), fmt(x.bareOtherCpuS, 1), fmt(x.rps), fmtPct(x.ratioToBare), fmt(x.p99Ms, 1), fmt(x.p999Ms, 1), fmt(x.maxMs, 1), fmt(x.otherCpuS, 1)]),
  );
  return body.length ? table([head, ...body]) : '';
}

/** What a target was checked against, as the Targets lines print it. @param {string} id @param {Row} r */
function targetFigure(id, r) {
  if (id.includes('ratio')) return `${fmt(100 * (r.ratioToBare ?? 0), 1)}% of bare`;
  if (id.includes('share')) return r.ratioToWrkBare === null ? 'no wrk baseline in this run (wrk not installed, or --loadgen autocannon)' : `${fmt(100 * r.ratioToWrkBare, 2)}% of bare (wrk)`;
  if (!id.includes('p99')) return `${fmt(r.okRps)}/s`;
  return r.rounds ? `p99 ${r.rounds.map((x) => fmt(x.p99Ms, 1)).join(' / ')} ms` : `p99 ${fmt(r.p99Ms, 1)} ms`;
}

/** @param {Row[]} rows */
export function renderTargets(rows) {
  const lines = [];
  for (const r of rows) {
    for (const t of r.targets) {
      const figure = targetFigure(t.id, r);
      lines.push(`${t.pass ? 'PASS' : 'FAIL'}  ${r.db.padEnd(8)} ${t.text.padEnd(28)} ${figure}${r.valid ? '' : '  (run INVALID)'}`);
    }
  }
  return lines.join('\n');
}

/** @param {Row[]} rows */
export function renderChecks(rows) {
  return rows
    .filter((r) => r.verify || r.notes.length)
    .map((r) => [r.verify ? `${r.verify.ok ? 'ok  ' : 'FAIL'}  ${r.db} ${r.route}: ${r.verify.text}` : '', ...r.notes.map((n) => `      ${r.db} ${r.route}: ${n}`)].filter(Boolean).join('\n'))
    .join('\n');
}

/**
 * A loud warning for every run that had refusals or failures: such a run measures the error path,
 * not the route, and its figures are invalid.
 * @param {Row[]} rows
 */
export function renderInvalid(rows) {
  const bad = rows.filter((r) => !r.valid);
  if (bad.length === 0) return '';
  const bar = '!'.repeat(78);
  const lines = bad.map((r) => `!!  ${r.db} ${r.route}: ${r.non2xx} non-2xx ${JSON.stringify(r.statusCodes)}, ${r.socketErrors} socket errors, ${r.timeouts} timeouts${r.verify && !r.verify.ok ? `; ${r.verify.text}` : ''}`);
  return [bar, '!!  INVALID RUNS: the figures below measure failures, not the route', ...lines, bar].join('\n');
}

/** @returns {object} the machine's facts for the result file */
export function machine() {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
}

/**
 * Which code was measured: the commit, whether the server's sources differ from it, and when the
 * measured build was made (the figures belong to that build, not to the sources).
 * @param {string} repoRoot @param {string} serverDir
 */
export function codeVersion(repoRoot, serverDir) {
  const git = (...args) => {
    try {
      return execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return '';
    }
  };
  let distBuiltAt = 'unknown';
  try {
    distBuiltAt = fs.statSync(path.join(serverDir, 'dist', 'main.js')).mtime.toISOString();
  } catch {
    // reported as unknown
  }
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    dirty: git('status', '--porcelain', '--', 'apps/server/src', 'apps/server/migrations', 'packages/contract') !== '',
    distBuiltAt,
  };
}

/**
 * @param {string} repoRoot
 * @param {object} result
 * @returns {string} the file written
 */
export function writeResult(repoRoot, result) {
  const dir = path.join(repoRoot, 'bench-results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}
