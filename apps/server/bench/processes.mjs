/**
 * Child processes of the benchmark (the bare server, the Reftrack server, its seed command) and the
 * CPU accounting read from /proc. Servers always run in their own processes: the load generator
 * must never share an event loop with the server it measures.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
export const SERVER_DIR = path.resolve(BENCH_DIR, '..');

/** Clock ticks per second, the unit of /proc/<pid>/stat times. */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** @returns {Promise<number>} a TCP port free right now on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Fields of /proc/<pid>/stat after the command name (which may contain spaces).
 * @param {number | string} pid a pid, 'self', or '<pid>/task/<tid>' for one thread
 * @returns {string[] | undefined}
 */
function statFields(pid) {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return raw.slice(raw.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * User + system CPU seconds of one process (all its threads), 0 when it is gone.
 * @param {number} pid
 */
export function processCpuSeconds(pid) {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : 0;
}

/**
 * User + system CPU seconds of a process's main thread (its event loop), 0 when it is gone.
 * @param {number} pid
 */
export function mainThreadCpuSeconds(pid) {
  const f = statFields(`${pid}/task/${pid}`);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : 0;
}

/**
 * CPU seconds of this process's children that have exited and been waited for (cutime + cstime).
 * Around a wrk run nothing else exits, so the difference is wrk's own CPU.
 */
export function reapedChildrenCpuSeconds() {
  const f = statFields('self');
  return f ? (Number(f[13]) + Number(f[14])) / CLK_TCK : 0;
}

/** @returns {Map<number, number>} pid → CPU seconds of every `postgres` process on this host */
export function postgresCpu() {
  const out = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const raw = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = raw.slice(raw.indexOf('(') + 1, raw.lastIndexOf(')'));
      if (comm !== 'postgres') continue;
      const f = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
      out.set(Number(name), (Number(f[11]) + Number(f[12])) / CLK_TCK);
    } catch {
      // the process ended while we read
    }
  }
  return out;
}

/**
 * Busy and total jiffies of the whole host, from the first line of /proc/stat.
 * @returns {{ busy: number, total: number }}
 */
export function hostCpu() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user..steal; guest is inside user
  const idle = v[3] + (v[4] ?? 0);
  return { busy: total - idle, total };
}

/**
 * A CPU meter over a time window: the server processes, postgres processes and the whole host.
 * @param {() => number[]} serverPids
 */
export function cpuMeter(serverPids) {
  const pids = serverPids();
  const server0 = pids.map(processCpuSeconds);
  const main0 = pids.map(mainThreadCpuSeconds);
  const pg0 = postgresCpu();
  const host0 = hostCpu();
  const self0 = process.cpuUsage();
  const reaped0 = reapedChildrenCpuSeconds();
  return {
    /** @returns {{ serverCpuS: number, serverMainThreadCpuS: number, perProcess: Array<{ pid: number, cpuS: number, mainThreadCpuS: number }>, postgresCpuS: number, hostBusyPct: number, benchProcessCpuS: number, reapedChildrenCpuS: number, otherCpuS: number }} */
    stop() {
      const server1 = pids.map(processCpuSeconds);
      const pg1 = postgresCpu();
      const host1 = hostCpu();
      const self1 = process.cpuUsage(self0);
      let pgDelta = 0;
      for (const [pid, s] of pg1) pgDelta += s - (pg0.get(pid) ?? 0);
      const perProcess = pids.map((pid, i) => ({ pid, cpuS: server1[i] - server0[i], mainThreadCpuS: mainThreadCpuSeconds(pid) - main0[i] }));
      const serverCpuS = perProcess.reduce((a, p) => a + p.cpuS, 0);
      const serverMainThreadCpuS = perProcess.reduce((a, p) => a + p.mainThreadCpuS, 0);
      const benchProcessCpuS = (self1.user + self1.system) / 1e6;
      const reapedChildrenCpuS = reapedChildrenCpuSeconds() - reaped0;
      // Whatever else ran on the host meanwhile (other users' builds and tests, the kernel's own
      // work): when this is large the figures are not this server's alone.
      const otherCpuS = (host1.busy - host0.busy) / CLK_TCK - serverCpuS - pgDelta - benchProcessCpuS - reapedChildrenCpuS;
      return {
        serverCpuS: round(serverCpuS, 2),
        serverMainThreadCpuS: round(serverMainThreadCpuS, 2),
        /** Each server process: its CPU, and its event loop's. */
        perProcess: perProcess.map((p) => ({ pid: p.pid, cpuS: round(p.cpuS, 2), mainThreadCpuS: round(p.mainThreadCpuS, 2) })),
        postgresCpuS: round(pgDelta, 2),
        hostBusyPct: round((100 * (host1.busy - host0.busy)) / Math.max(1, host1.total - host0.total), 1),
        benchProcessCpuS: round(benchProcessCpuS, 2),
        reapedChildrenCpuS: round(reapedChildrenCpuS, 2),
        otherCpuS: round(Math.max(0, otherCpuS), 2),
      };
    },
  };
}

/** @param {number} x @param {number} digits */
export const round = (x, digits) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Waits (up to `maxWaitMs`) for the host to be quiet — less than `maxBusyPct` busy over a second —
 * before a measured run, because on a small machine another process's build or test run would be
 * measured as the server's slowness.
 * @returns {Promise<{ quiet: boolean, busyPct: number, waitedS: number }>}
 */
export async function waitForQuietHost(maxBusyPct = 15, maxWaitMs = 120_000) {
  const t0 = Date.now();
  let busyPct = 100;
  while (Date.now() - t0 <= maxWaitMs) {
    const a = hostCpu();
    await new Promise((r) => setTimeout(r, 1000));
    const b = hostCpu();
    busyPct = round((100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total), 1);
    if (busyPct < maxBusyPct) return { quiet: true, busyPct, waitedS: Math.round((Date.now() - t0) / 1000) };
  }
  return { quiet: false, busyPct, waitedS: Math.round((Date.now() - t0) / 1000) };
}

/**
 * Waits (up to `maxWaitMs`) until processes use less than `maxCorePct` of a core over half a
 * second: the click server between its rounds finishes the outbox and rollup work its last round
 * left, which would otherwise be measured as another process's noise in the next bare run.
 * @param {() => number[]} pids
 * @returns {Promise<number>} seconds waited
 */
export async function waitForIdle(pids, maxCorePct = 5, maxWaitMs = 60_000) {
  const t0 = Date.now();
  const cpu = () => pids().reduce((a, pid) => a + processCpuSeconds(pid), 0);
  while (Date.now() - t0 <= maxWaitMs) {
    const a = cpu();
    await new Promise((r) => setTimeout(r, 500));
    if ((100 * (cpu() - a)) / 0.5 < maxCorePct) break;
  }
  return Math.round((Date.now() - t0) / 1000);
}

/**
 * Waits until `GET url` answers 200.
 * @param {string} url
 * @param {import('node:child_process').ChildProcess} child the process that should be answering
 * @param {number} timeoutMs
 */
export async function waitFor200(url, child, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`process exited (${child.exitCode ?? child.signalCode}) before ${url} answered`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = /** @type {Error} */ (err).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

/**
 * Stops a child with SIGTERM (servers drain and close their pools), then SIGKILL after a grace period.
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} graceMs
 */
export async function stopChild(child, graceMs = 15_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts the bare baseline server; `env` adds to its environment (BARE_ANSWER: bare-server.mjs).
 * @param {Record<string, string>} [env]
 * @returns {Promise<{ url: string, pids: () => number[], stop: () => Promise<void> }>}
 */
export async function startBareServer(env = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(BENCH_DIR, 'bare-server.mjs')], {
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pids: () => [/** @type {number} */ (child.pid)], stop: () => stopChild(child) };
}

/**
 * Copies the built server (dist + migrations + package.json, node_modules linked) to a private
 * directory, so that a rebuild of apps/server/dist during the run (someone else may be working on
 * the server) cannot change or remove the code being measured halfway through.
 * @param {string} tmpDir
 * @param {string} [serverDir] another build of apps/server to measure (e.g. an older release's)
 * @returns {string} path of the snapshot's main.js
 */
export function snapshotServer(tmpDir, serverDir = SERVER_DIR) {
  const dist = path.join(serverDir, 'dist');
  if (!fs.existsSync(path.join(dist, 'main.js'))) throw new Error(`${dist}/main.js not found: run \`pnpm --filter @reftrack/server build\` first`);
  const snap = path.join(tmpDir, 'server');
  fs.mkdirSync(snap, { recursive: true });
  fs.cpSync(dist, path.join(snap, 'dist'), { recursive: true });
  // The server finds its migrations beside package.json above its own file (src/db/migrate.ts).
  fs.cpSync(path.join(serverDir, 'migrations'), path.join(snap, 'migrations'), { recursive: true });
  fs.copyFileSync(path.join(serverDir, 'package.json'), path.join(snap, 'package.json'));
  fs.symlinkSync(path.join(serverDir, 'node_modules'), path.join(snap, 'node_modules'), 'dir');
  return path.join(snap, 'dist', 'main.js');
}

/**
 * The environment of every server child: the benchmark's own settings override anything inherited
 * (an inherited REDIS_URL would move the rate limiter to Redis, PORT would collide, and so on).
 * @param {Record<string, string>} extra
 */
export function serverEnv(extra) {
  const env = { ...process.env };
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'LOG_LEVEL', 'TRUST_PROXY', 'PUBLIC_BASE_URL', 'GEOIP_DATABASE', 'NODE_OPTIONS']) delete env[k];
  return { ...env, LOG_LEVEL: 'warn', TRUST_PROXY: '1', HOST: '127.0.0.1', ...extra };
}

/**
 * `reftrack-server seed --file F` with the benchmark database.
 * @param {string} main snapshot main.js
 * @param {string} databaseUrl
 * @param {string} fixtureFile
 */
export function seed(main, databaseUrl, fixtureFile) {
  execFileSync(process.execPath, [main, 'seed', '--file', fixtureFile], {
    env: serverEnv({ DATABASE_URL: databaseUrl }),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
}

/**
 * Starts the Reftrack server (one process, or `processes` workers behind node:cluster) and waits
 * for GET /healthz to answer 200.
 * @param {{ main: string, databaseUrl: string, processes: number, logFile: string, cpuProfDir?: string }} o
 * @returns {Promise<{ url: string, pids: () => number[], stop: () => Promise<void>, logFile: string, unexpectedExit: () => string | undefined }>}
 */
export async function startServer(o) {
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS: node flags for the measured servers only (a diagnosis: `--trace-gc`).
  const extraArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const nodeArgs = [...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []), ...extraArgs];
  const log = fs.openSync(o.logFile, 'a');
  const env = serverEnv({ DATABASE_URL: o.databaseUrl, PORT: String(port) });
  /** @type {import('node:child_process').ChildProcess} */
  let child;
  let workerPids = [];
  if (o.processes <= 1) {
    // The production shape: exactly `node dist/main.js start`.
    child = spawn(process.execPath, [...nodeArgs, o.main, 'start'], { env, stdio: ['ignore', log, log] });
  } else {
    child = spawn(process.execPath, [...nodeArgs, path.join(BENCH_DIR, 'cluster.mjs')], {
      env: { ...env, BENCH_SERVER_MAIN: o.main, BENCH_PROCESSES: String(o.processes) },
      stdio: ['ignore', 'pipe', log],
    });
    let out = '';
    await new Promise((resolve, reject) => {
      child.stdout?.on('data', (d) => {
        out += d;
        const m = /workers (\[[^\]]*\])/.exec(out);
        if (m) {
          workerPids = JSON.parse(m[1]);
          resolve(undefined);
        }
      });
      child.once('exit', (code) => reject(new Error(`cluster launcher exited with ${code}; see ${o.logFile}`)));
    });
    // Worker output (their stdout is the launcher's) goes to the log from here on.
    child.stdout?.on('data', (d) => fs.appendFileSync(o.logFile, d));
  }
  fs.closeSync(log);
  // A server that dies during a run (a crash, or a signal from something else on the host) must
  // be reported as such, not as a slow or refusing server.
  let stopping = false;
  /** @type {string | undefined} */
  let died;
  child.once('exit', (code, signal) => {
    if (!stopping) died = `server process ${child.pid} exited during the run (${signal ? `signal ${signal}` : `code ${code}`}) at ${new Date().toISOString()}`;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${url}/healthz`, child);
  } catch (err) {
    await stopChild(child);
    throw new Error(`${/** @type {Error} */ (err).message}\n--- server log ---\n${tail(o.logFile, 40)}`);
  }
  return {
    url,
    pids: () => [/** @type {number} */ (child.pid), ...workerPids],
    stop: () => {
      stopping = true;
      return stopChild(child);
    },
    logFile: o.logFile,
    unexpectedExit: () => died,
  };
}

/** @param {string} file @param {number} lines */
export function tail(file, lines) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines - 1).join('\n');
  } catch {
    return '';
  }
}

/**
 * Warnings and errors the server logged (pino JSON lines, level 40 and 50+; other lines that
 * mention an error count as errors), split at `stopOffset`: the log's size when the benchmark
 * asked the server to stop. What comes after is the server's shutdown, not the run.
 * @param {string} file
 * @param {number} [stopOffset]
 */
export function logSummary(file, stopOffset = Infinity) {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    text = '';
  }
  const cut = Math.min(text.length, stopOffset);
  return { run: summarize(text.slice(0, cut)), shutdown: summarize(text.slice(cut)) };
}

/** @param {string} text */
function summarize(text) {
  let warn = 0;
  let error = 0;
  const messages = new Map();
  const add = (msg) => messages.set(msg, (messages.get(msg) ?? 0) + 1);
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      // Not pino: a crash trace, or a library writing to the console (knex does). Stack frames
      // ("    at ...") belong to the line before.
      if (/^\s+at /.test(line) || !/error/i.test(line)) continue;
      error++;
      add(`error: ${line.trim().slice(0, 160)}`);
      continue;
    }
    if (entry.level >= 50) error++;
    else if (entry.level >= 40) warn++;
    else continue;
    add(`${entry.level >= 50 ? 'error' : 'warn'}: ${entry.msg ?? ''}${entry.err?.message ? ` — ${entry.err.message}` : ''}`.slice(0, 200));
  }
  return { warn, error, messages: [...messages].map(([message, count]) => ({ message, count })).slice(0, 10) };
}

/** @param {string} file */
export function fileSize(file) {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
