#!/usr/bin/env node
/**
 * Instructions the server executes per click, lead or sale on SQLite, counted by Valgrind's
 * callgrind: a measure of work that the host's other load cannot move, for A/B comparisons of two
 * builds (issue 18's "lead and sale rates stay within 10% of d26b411's" and its click share, which
 * wall-clock runs on a busy two-core host could not settle). Needs valgrind (callgrind,
 * callgrind_control).
 *
 *   node apps/server/bench/instruction-counts.mjs --route click|lead|sale [--count 1000] [--warmup 20000]
 *        [--concurrency 20] [--programs 2000] [--server-dir DIR] [--stats-replay 10000]
 *        [--idle-seconds 5] [--idle-pct 10] [--node-args "--no-memory-reducer"] [--out DIR]
 *
 *   e.g. an A/B, builds alternated (each a `git worktree` with `pnpm install && pnpm build`):
 *   node apps/server/bench/instruction-counts.mjs --route sale --server-dir /tmp/d26/apps/server
 *   node apps/server/bench/instruction-counts.mjs --route sale --server-dir /tmp/head/apps/server
 *
 * Method (each run has its own fresh SQLite file and server process):
 * 1. The built server (`--server-dir`, default this checkout's apps/server; a private snapshot of
 *    its dist, as run.mjs takes) is seeded with run.mjs's fixture (fixture.mjs: `--programs`
 *    programs, each with its own key and link) and started as `node dist/main.js start` with
 *    run.mjs's environment (processes.mjs, serverEnv), under
 *    `valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes`. Valgrind runs every
 *    thread of the process — the event loop, the worker threads (stats, click writer,
 *    checkpointer), V8's GC and compiler threads, libuv's pool — so the count is the whole
 *    process's, one file per thread. Instrumentation starts off: until `callgrind_control -i on`
 *    the server runs at about a quarter of its speed and nothing is counted.
 *    (`--collect-atstart=no` would be the wrong switch: `-i on` switches instrumentation, not
 *    collection, and a run started that way counts 0.)
 *    Node gets `--no-memory-reducer` (`--node-args`): V8's memory reducer starts garbage
 *    collections when the allocation rate per wall-clock millisecond looks low, which ~50 times
 *    slower under Valgrind it does even under load; at full speed under load it does not run.
 * 2. For the click route, nothing: its requests are run.mjs's (the hot link, the same body and
 *    headers). For the others, the customers the route needs are made as run.mjs makes them:
 *    clicks rotated over every program's link (each answer's click id kept), then for the sale
 *    route a lead on each, so that
 *    each sale is a customer's first, with its program's key, keys rotated over the programs (the
 *    sale route allows 120 a minute per key; no key gets more than a dozen here).
 * 3. `--warmup` requests of the route, uninstrumented: about what run.mjs's 2 s warm-up sends at
 *    full speed, so that V8's optimizing tiers have settled (at 300 the count per lead was 3 times
 *    the settled one, at 2,000 still 1.6 times); then the server is left until it is idle.
 * 4. Instrumented windows, one `callgrind_control -d` dump (a callgrind "part") each:
 *    1 `--idle-seconds` of the idle server; 2 exactly `--count` requests of the route,
 *    `--concurrency` in flight (every answer must be 2xx, or the run fails); 3 the drain, from
 *    the last answer until the server is idle again (outbox consumers and the stats thread finish
 *    the requests' work); 4 `--idle-seconds` idle again; 5 the stats replay (below).
 * 5. Reported per request, from parts 2 + 3:
 *    - all: everything the process executed;
 *    - without V8's compilers: less TurboFan/Maglev/Sparkplug/parser work (one-time work, whose
 *      share of a window depends on the warm-up, not on the requests);
 *    - that less the idle rate: less the idle server's rate (parts 1 and 4, compilers excluded)
 *      over the requests' and drain's wall-clock time: timers and polls cost per second, and
 *      Valgrind's ~50 times longer run charges each request ~50 times more of them;
 *    - the split by thread and by kind of code (JavaScript, SQLite, GC, compiler, other native),
 *      and the top functions by self cost (also in result.json).
 *    The database is checked as run.mjs checks it: the rows added match the acknowledged answers
 *    exactly (write-checks.mjs). Dumps, server and Valgrind logs and result.json stay in `--out`
 *    (default bench-results/instruction-counts/<commit>-<route>-<count>-<time>/), for
 *    callgrind_annotate.
 *
 * The stats replay (builds with the stats thread, which d26b411 has not): under Valgrind the
 * stats thread sees ~35 events a second, far under the 1,000 a second at which it lengthens its
 * rounds to 2 s (jobs/stats.worker.ts), so its passes hold a few events each and share no rollup
 * rows. At full speed under load a pass holds a 2 s round's events and sums their rows per key
 * first. So at the end its cursors are moved back over the events of the last `--stats-replay`
 * requests (warm-up's and measured; at most 20,000 events, its largest pass) and it handles them
 * again in one pass (part 5); its rollups then count those events twice, which nothing reads. The
 * figures "with the stats thread's work at one pass" replace its count per request in the run by
 * the replay's.
 *
 * What the count is not: a time. Threads run one at a time under Valgrind and ~50 times slower, so
 * whatever the server paces by the clock (the event loop's outbox runner's 100 ms rounds, group
 * commits that gather what arrives meanwhile) sees fewer requests per round than at full speed.
 * Waits for a lock or for I/O cost no instructions; system calls count only their user-space part.
 * The click route feels this most: under Valgrind a click batch holds one or two clicks instead of
 * tens, so the work paid per batch (the message to the writer thread and its answer, the batch's
 * `clicks.recorded` event and the outbox consumers that read it) weighs some twenty times what it
 * does at full speed, and the event loop's timers (outbox and webhook polls), paid per second, are
 * most of the difference between two builds unless taken off: hence "the event loop less its idle
 * rate", the figure to compare for the click lane's own work.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildFixture, CLICK_BODY, CLICK_HEADERS, programDomain, programKey, programLink } from './fixture.mjs';
import { createSqlite, outboxBehind, writeCounts } from './db.mjs';
import { randomIp } from './load.mjs';
import { freePort, logSummary, processCpuSeconds, round, seed, SERVER_DIR, serverEnv, snapshotServer, stopChild, tail, waitFor200, waitForIdle } from './processes.mjs';
import { codeVersion, machine } from './report.mjs';
import { compareStored } from './write-checks.mjs';

const HARNESS_ROOT = path.resolve(SERVER_DIR, '..', '..');
const CLICK_PATH = '/api/v1/track/click';
const LEAD_PATH = '/api/v1/track/lead';
const SALE_PATH = '/api/v1/track/sale';

function parseOptions() {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      route: { type: 'string' },
      count: { type: 'string', default: '1000' },
      // About what run.mjs's 2 s warm-up sends at full speed: V8's optimizing tiers settle late.
      warmup: { type: 'string', default: '20000' },
      concurrency: { type: 'string', default: '20' },
      programs: { type: 'string', default: '2000' },
      'server-dir': { type: 'string' },
      'idle-seconds': { type: 'string', default: '5' },
      // An instrumented idle server's timers use a few % of a core; below this it counts as idle.
      'idle-pct': { type: 'string', default: '10' },
      // V8's memory reducer starts garbage collections by the clock once the allocation rate (in
      // bytes per wall-clock ms) looks low — which, ~50 times slower under Valgrind, it does even
      // under load, and an idle server then runs a major GC every few seconds. At full speed under
      // load it does not run; off, the count is the load's GC work, not the clock's.
      'node-args': { type: 'string', default: '--no-memory-reducer' },
      // Events of the last requests the stats thread handles again in one pass at the end (0: no
      // replay): about the 2 s round of a busy server at full speed (stats.worker.ts).
      'stats-replay': { type: 'string', default: '10000' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 13).join('\n'));
    process.exit(0);
  }
  const int = (name, min) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  if (values.route !== 'click' && values.route !== 'lead' && values.route !== 'sale') throw new Error('--route must be click, lead or sale');
  return {
    route: /** @type {'click' | 'lead' | 'sale'} */ (values.route),
    count: int('count', 1),
    warmup: int('warmup', 0),
    concurrency: int('concurrency', 1),
    programs: int('programs', 1),
    serverDir: path.resolve(values['server-dir'] ?? SERVER_DIR),
    idleSeconds: int('idle-seconds', 1),
    idlePct: int('idle-pct', 1),
    nodeArgs: (values['node-args'] ?? '').split(' ').filter(Boolean),
    statsReplay: int('stats-replay', 0),
    out: values.out,
  };
}

/** Cleanup steps run on the way out, also after Ctrl-C (as in run.mjs). */
const cleanups = [];
async function cleanup() {
  for (const step of cleanups.splice(0).reverse()) await step().catch((err) => console.error(`cleanup: ${err.message}`));
}
process.on('SIGINT', () => {
  console.error('\ninterrupted: cleaning up');
  cleanup().finally(() => process.exit(130));
});

/**
 * @typedef {{ path: string, headers: Record<string, string>, body: string }} Req
 * @typedef {{ status: number, body: string }} Answer
 */

/**
 * Sends exactly `n` POSTs, `concurrency` in flight on keep-alive connections (one request per
 * connection at a time, as autocannon does in run.mjs). Not autocannon itself: its 10 s timeout is
 * too short for a server under Valgrind, and here every answer is needed in order to fail loudly.
 * Every request gets a new random X-Forwarded-For (the server runs with TRUST_PROXY=1), as in
 * run.mjs, so the per-IP limiters run their real path without refusing.
 * @param {string} url
 * @param {number} n
 * @param {number} concurrency
 * @param {(i: number) => Req} build
 * @param {(i: number, a: Answer) => void} [onAnswer]
 * @returns {Promise<{ ok: number, statuses: Record<string, number>, failures: string[] }>}
 */
async function sendAll(url, n, concurrency, build, onAnswer) {
  // A fresh agent per batch: between batches the server may close idle sockets (keep-alive
  // timeout), and reusing one it is closing would be a spurious error.
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const base = new URL(url);
  /** @type {Record<string, number>} */
  const statuses = {};
  /** @type {string[]} */
  const failures = [];
  let ok = 0;
  let next = 0;
  /** @param {Req} r @returns {Promise<Answer>} */
  const post = (r) =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(r.body);
      const req = http.request(
        { host: base.hostname, port: base.port, method: 'POST', path: r.path, agent, headers: { ...r.headers, 'X-Forwarded-For': randomIp(), 'Content-Length': String(body.length) } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      // Generous: under Valgrind a request can wait behind a garbage collection or a stats pass.
      req.setTimeout(300_000, () => req.destroy(new Error('no answer within 300 s')));
      req.on('error', reject);
      req.end(body);
    });
  const lane = async () => {
    while (next < n) {
      const i = next++;
      let a;
      try {
        a = await post(build(i));
      } catch (err) {
        a = { status: 0, body: /** @type {Error} */ (err).message };
      }
      statuses[a.status] = (statuses[a.status] ?? 0) + 1;
      if (a.status >= 200 && a.status < 300) ok++;
      else if (failures.length < 5) failures.push(`request ${i}: ${a.status || 'error'} ${a.body.slice(0, 200)}`);
      onAnswer?.(i, a);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, lane));
  agent.destroy();
  return { ok, statuses, failures };
}

/**
 * @param {string} what
 * @param {Awaited<ReturnType<typeof sendAll>>} r
 * @param {number} n
 */
function requireAll2xx(what, r, n) {
  if (r.ok !== n) throw new Error(`${what}: ${n - r.ok} of ${n} answers were not 2xx (${JSON.stringify(r.statuses)}): ${r.failures.join(' | ')}`);
}

/**
 * The server's process under callgrind. Valgrind runs node in its own process, so the child's pid
 * is the one callgrind_control talks to.
 * @param {{ main: string, databaseUrl: string, outDir: string, nodeArgs: string[] }} o
 */
async function startInstrumented(o) {
  const port = await freePort();
  const logFile = path.join(o.outDir, 'server.log');
  const log = fs.openSync(logFile, 'a');
  const vgdbPrefix = path.join(o.outDir, 'vgdb');
  const args = [
    '--tool=callgrind',
    // Nothing is counted until `callgrind_control -i on`: start-up, seeding of customers and the
    // warm-up run at nulgrind-like speed.
    '--instr-atstart=no',
    '--trace-children=no',
    // One file per thread and dump: the event loop, the worker threads and V8's helpers apart.
    '--separate-threads=yes',
    `--callgrind-out-file=${path.join(o.outDir, 'callgrind.out')}`,
    `--log-file=${path.join(o.outDir, 'valgrind.log')}`,
    // A private vgdb pipe directory, so callgrind_control finds exactly this process.
    `--vgdb-prefix=${vgdbPrefix}`,
    process.execPath,
    ...o.nodeArgs,
    o.main,
    'start',
  ];
  const env = serverEnv({ DATABASE_URL: o.databaseUrl, PORT: String(port) });
  const child = spawn('valgrind', args, { env, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  let stopping = false;
  /** @type {string | undefined} */
  let died;
  child.once('exit', (code, signal) => {
    if (!stopping) died = `server process ${child.pid} exited during the run (${signal ? `signal ${signal}` : `code ${code}`})`;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${url}/healthz`, child, 600_000);
  } catch (err) {
    await stopChild(child, 5000);
    throw new Error(`${/** @type {Error} */ (err).message}\n--- server log ---\n${tail(logFile, 40)}\n--- valgrind log ---\n${tail(path.join(o.outDir, 'valgrind.log'), 40)}`);
  }
  const pid = /** @type {number} */ (child.pid);
  /**
   * callgrind_control with the server's own environment: vgdb names its pipes after the USER and
   * HOST variables of the valgrind process (serverEnv sets HOST=127.0.0.1), and with other values
   * it reaches nothing — yet prints "OK" and exits 0, with the failure on stderr only.
   * @param {...string} cargs
   */
  const control = (...cargs) => {
    const r = spawnSync('callgrind_control', [`--vgdb-prefix=${vgdbPrefix}`, ...cargs, String(pid)], { env, encoding: 'utf8', timeout: 300_000 });
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    if (r.status !== 0 || !/sending command/.test(out) || /error|failed|no process/i.test(out)) throw new Error(`callgrind_control ${cargs.join(' ')} ${pid} failed (exit ${r.status}): ${out}`);
    return out;
  };
  return {
    url,
    pid,
    logFile,
    control,
    died: () => died,
    // A generous grace: the instrumented server drains slowly, and a SIGKILL would lose its exit dump.
    stop: () => {
      stopping = true;
      return stopChild(child, 600_000);
    },
  };
}

/**
 * Kinds of work, told apart by the function (and object) an instruction ran in. Approximate, by
 * names: V8's C++ functions are named in node's symbols, JIT-compiled JavaScript is not.
 * - compiler: V8's compilers (TurboFan, Maglev, Sparkplug, the parser and bytecode generator).
 *   One-time work whose share of a window depends on how warm the code was, not on the requests.
 * - gc: V8's garbage collector (scavenges, marking, sweeping, compaction; main and helper threads).
 * - sqlite: better-sqlite3's native module, SQLite included.
 * - js: JavaScript — V8's builtins (Builtins_*) and JIT-compiled code (no object file).
 * - native: the rest: V8's runtime and inline caches' slow paths, node, libuv, libc, OpenSSL.
 */
const KINDS = ['js', 'sqlite', 'gc', 'compiler', 'native'];
const COMPILER = /v8::internal::(compiler|maglev|baseline|interpreter)::|v8::internal::(Compiler|Parser|ParserBase|PreParser|Scanner|OptimizingCompileDispatcher|Zone|AstValueFactory|Scope|DeclarationScope|(\w*Assembler))\b|v8::internal::(Turbofan|Maglev)/;
const GC = /v8::internal::(Heap|\w*(Scaveng|Mark|Sweep|Evacuat|Compact)\w*|\w*Visitor\w*|MemoryAllocator|MemoryChunk|BasicMemoryChunk|PagedSpace|NewSpace|SemiSpace|LargeObjectSpace|RememberedSet|SlotSet|TypedSlotSet|GlobalHandles|EphemeronHashTable)\b|heap::base::|cppgc::/;
/** @param {string} ob @param {string} fn @returns {string} */
function kindOf(ob, fn) {
  if (fn.startsWith('Builtins_') || ob === '???') return 'js';
  if (ob.includes('better_sqlite3')) return 'sqlite';
  if (COMPILER.test(fn)) return 'compiler';
  if (GC.test(fn)) return 'gc';
  return 'native';
}

/**
 * Self cost per function of one callgrind file (format: valgrind.org/docs/manual/cl-format.html).
 * Names are compressed ("fn=(12) name" once, "fn=(12)" after), and shared between fn= and cfn=
 * (ob= and cob=); the cost line after a calls= line is the callee's inclusive cost, not self cost.
 * @param {string} text
 * @returns {Map<string, number>} "object\tfunction" → Ir
 */
function selfCosts(text) {
  /** @type {Map<string, string>} */
  const objects = new Map();
  /** @type {Map<string, string>} */
  const functions = new Map();
  /** @param {Map<string, string>} names @param {string} value */
  const name = (names, value) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(value);
    if (!m) return value;
    if (m[2] !== undefined) names.set(m[1], m[2]);
    return names.get(m[1]) ?? '?';
  };
  let ob = '?';
  let fn = '?';
  let skip = false;
  /** @type {Map<string, number>} */
  const costs = new Map();
  for (const line of text.split('\n')) {
    if (skip) {
      skip = false;
      continue;
    }
    const c = line.charCodeAt(0);
    if ((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42) {
      const ir = Number(line.split(' ')[1] ?? 0);
      if (ir) costs.set(`${ob}\t${fn}`, (costs.get(`${ob}\t${fn}`) ?? 0) + ir);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    if (key === 'ob') ob = name(objects, value);
    else if (key === 'cob') name(objects, value);
    else if (key === 'fn') fn = name(functions, value);
    else if (key === 'cfn') name(functions, value);
    else if (key === 'calls') skip = true;
  }
  return costs;
}

/**
 * The callgrind dumps of the output directory: part, thread, total Ir, what the thread ran, and
 * the self cost per function.
 * @param {string} outDir
 */
function readDumps(outDir) {
  const dumps = [];
  for (const name of fs.readdirSync(outDir)) {
    if (!name.startsWith('callgrind.out')) continue;
    const text = fs.readFileSync(path.join(outDir, name), 'utf8');
    const header = (key) => {
      const m = new RegExp(`^${key}: *(.*)$`, 'm').exec(text);
      return m ? m[1].trim() : '';
    };
    const costs = selfCosts(text);
    /** @type {Record<string, number>} */
    const kinds = Object.fromEntries(KINDS.map((k) => [k, 0]));
    for (const [key, ir] of costs) {
      const [ob, fn] = key.split('\t');
      kinds[kindOf(ob, fn)] += ir;
    }
    const ir = Number(header('totals') || header('summary') || 0);
    const parsed = [...costs.values()].reduce((a, b) => a + b, 0);
    if (parsed !== ir) throw new Error(`${name}: self costs add up to ${parsed}, the file's totals say ${ir}`);
    dumps.push({
      file: name,
      part: Number(header('part')),
      thread: Number(header('thread') || 1),
      ir,
      // A thread that ran JavaScript (V8's embedded builtins): the event loop or a worker thread;
      // the others are V8's platform threads (GC, compiler) and libuv's pool.
      js: /Builtins_/.test(text),
      kinds,
      costs,
    });
  }
  return dumps;
}

/**
 * The newest outbox event's id, or null for a build without the outbox (d26b411). On SQLite the
 * cursors order events by id alone (db/outbox.ts).
 * @param {import('knex').Knex} knex
 * @returns {Promise<number | null>}
 */
async function outboxTail(knex) {
  if (!(await knex.schema.hasTable('outbox_events'))) return null;
  const row = await knex('outbox_events').max({ id: 'id' }).first();
  return Number(row?.id ?? 0);
}

/**
 * The stats thread's consumers (jobs/consumers.ts, STATS_CONSUMERS: stats-clicks,
 * stats-conversions) and where they are.
 * @param {import('knex').Knex} knex
 * @returns {Promise<Array<{ consumer: string, last_id: number }>>}
 */
async function statsCursors(knex) {
  if (!(await knex.schema.hasTable('outbox_cursors'))) return [];
  const rows = await knex('outbox_cursors').where('consumer', 'like', 'stats-%').select('consumer', 'last_id');
  return rows.map((r) => ({ consumer: String(r.consumer), last_id: Number(r.last_id) }));
}

/** @param {number} n */
const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function main() {
  const opts = parseOptions();
  for (const tool of ['valgrind', 'callgrind_control']) {
    const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
    if (r.error) throw new Error(`${tool} not found: install valgrind`);
  }
  const code = codeVersion(path.resolve(opts.serverDir, '..', '..'), opts.serverDir);
  const started = new Date();
  const stamp = started.toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const outDir = path.resolve(opts.out ?? path.join(HARNESS_ROOT, 'bench-results', 'instruction-counts', `${code.commit}-${opts.route}-${opts.count}-${stamp}`));
  fs.mkdirSync(outDir, { recursive: true });
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-ir-'));
  cleanups.push(async () => fs.rmSync(tmpDir, { recursive: true, force: true }));
  const serverMain = snapshotServer(tmpDir, opts.serverDir);
  const runId = crypto.randomBytes(4).toString('hex');
  console.log(`instruction counts ${runId}: ${opts.route} × ${opts.count} (after ${opts.warmup} warm-up), ${opts.concurrency} in flight, ${opts.programs} programs`);
  console.log(`server: ${opts.serverDir} (commit ${code.commit}${code.dirty ? ' + uncommitted changes' : ''}, dist built ${code.distBuiltAt}), snapshot ${serverMain}`);
  console.log(`output: ${outDir}`);

  const fixtureFile = path.join(tmpDir, 'fixture.json');
  fs.writeFileSync(fixtureFile, JSON.stringify(buildFixture(opts.programs)));
  const db = await createSqlite(tmpDir);
  cleanups.push(db.drop);
  seed(serverMain, db.databaseUrl, fixtureFile);

  const t0 = Date.now();
  const server = await startInstrumented({ main: serverMain, databaseUrl: db.databaseUrl, outDir, nodeArgs: opts.nodeArgs });
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await server.stop();
  });
  const pids = () => [server.pid];
  console.log(`server pid ${server.pid} under callgrind, answering after ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  // Customers, made as run.mjs makes them. Every request of the route uses a customer of its own
  // (a second lead on a customer is refused; a second sale would be a repeat sale, not the bench's
  // first sales), so the warm-up and the measured requests together need that many.
  const total = opts.warmup + opts.count;
  // The click route makes its own customers: none beforehand.
  const clicks = opts.route === 'click' ? 0 : opts.route === 'lead' ? total : Math.max(total, opts.programs);
  /** @type {Array<{ clickId: string, program: number }>} */
  const ids = [];
  let t = Date.now();
  const clickRun = await sendAll(
    server.url,
    clicks,
    opts.concurrency,
    (i) => {
      const p = (i % opts.programs) + 1;
      const domain = programDomain(p);
      return {
        path: CLICK_PATH,
        // run.mjs's click headers, so that the customers are made by the same route and inputs.
        headers: CLICK_HEADERS,
        body: JSON.stringify({ affiliate_url: `https://${domain}/?aff=${programLink(p)}`, page_url: `https://${domain}/`, session_id: `s${i}` }),
      };
    },
    (i, a) => {
      if (a.status === 200) ids[i] = { clickId: JSON.parse(a.body).click_id, program: (i % opts.programs) + 1 };
    },
  );
  requireAll2xx('clicks', clickRun, clicks);
  if (clicks > 0) console.log(`made ${clicks} click ids over ${Math.min(clicks, opts.programs)} programs' links in ${((Date.now() - t) / 1000).toFixed(0)} s`);

  /** @param {number} i */
  const leadRequest = (i) => ({
    path: LEAD_PATH,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${programKey(ids[i].program)}` },
    body: JSON.stringify({ click_id: ids[i].clickId, customer_key: `u${i}` }),
  });
  /** @type {(i: number) => Req} the measured route's i-th request (0-based over warm-up and measured) */
  let routeRequest = leadRequest;
  // run.mjs's click: every request on the hot link, one program, the same body.
  if (opts.route === 'click') routeRequest = () => ({ path: CLICK_PATH, headers: CLICK_HEADERS, body: CLICK_BODY });
  if (opts.route === 'sale') {
    t = Date.now();
    requireAll2xx('leads for the sale run', await sendAll(server.url, clicks, opts.concurrency, leadRequest), clicks);
    console.log(`made ${clicks} customers with a lead in ${((Date.now() - t) / 1000).toFixed(0)} s`);
    // run.mjs's rotation: sale i takes the next program's key (programs sorted), and that
    // program's customers in turn.
    /** @type {Map<number, string[]>} */
    const leaded = new Map();
    ids.forEach(({ program }, i) => leaded.set(program, [...(leaded.get(program) ?? []), `u${i}`]));
    const programs = [...leaded.keys()].sort((a, b) => a - b);
    routeRequest = (i) => {
      const program = programs[i % programs.length];
      const keys = /** @type {string[]} */ (leaded.get(program));
      return {
        path: SALE_PATH,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${programKey(program)}` },
        body: JSON.stringify({ transaction_id: `txn_${runId}_sqlite_${i}`, amount_cents: 1999, customer_key: keys[Math.floor(i / programs.length) % keys.length] }),
      };
    };
  }
  await waitForIdle(pids, opts.idlePct, 600_000);
  const before = await writeCounts(db.knex);
  const tailBeforeWarmup = await outboxTail(db.knex);

  t = Date.now();
  if (opts.warmup > 0) requireAll2xx('warm-up', await sendAll(server.url, opts.warmup, opts.concurrency, routeRequest), opts.warmup);
  const warmS = (Date.now() - t) / 1000;
  const settledS = await waitForIdle(pids, opts.idlePct, 600_000);
  console.log(`warm-up: ${opts.warmup} ${opts.route}s in ${warmS.toFixed(0)} s, idle again after ${settledS} s`);

  // The instrumented windows, one callgrind dump each (parts 1–4; the exit dump is part 5):
  // 1 the idle server before the requests, 2 the requests, 3 the drain, 4 the idle server after.
  // The idle windows measure what the server's timers cost per wall-clock second (outbox and
  // webhook polls, the stats thread's rounds), which the ~50 times longer instrumented run charges
  // to each request ~50 times more than a run at full speed does.
  const cpu0 = processCpuSeconds(server.pid);
  server.control('-i', 'on');
  const tOn = Date.now();
  await new Promise((r) => setTimeout(r, opts.idleSeconds * 1000));
  const tStart = Date.now();
  server.control('-d'); // part 1: idle before
  const measured = await sendAll(server.url, opts.count, opts.concurrency, (i) => routeRequest(opts.warmup + i));
  const tLast = Date.now();
  server.control('-d'); // part 2: the requests
  requireAll2xx('measured run', measured, opts.count);
  const drainMaxS = 600;
  const drainS = await waitForIdle(pids, opts.idlePct, drainMaxS * 1000);
  const tIdle = Date.now();
  server.control('-d'); // part 3: the drain
  await new Promise((r) => setTimeout(r, opts.idleSeconds * 1000));
  const tEnd = Date.now();
  server.control('-d'); // part 4: idle after

  // The stats replay (part 5). Under Valgrind the stats thread sees ~35 events a second, far
  // under the 1,000 a second at which it lengthens its rounds to 2 s (stats.worker.ts), so its
  // passes hold a few events each and their rollup rows are shared by none: its count per request
  // above is that of a quiet server. At full speed under load, a pass holds a 2 s round's events
  // (~10,000) and their rows are summed per key first. To count that regime, its cursors are moved
  // back (from this process, on the idle server) over the events of the last `--stats-replay`
  // requests — warm-up's and measured — and its next poll (≤ 1 s) handles them in one pass
  // (≤ 20,000 events, written in parts). Its rollups count those events twice; nothing reads them.
  const tailAfter = await outboxTail(db.knex);
  /** @type {{ events: number, requests: number, seconds: number, from: number, to: number } | undefined} */
  let replay;
  const cursors = await statsCursors(db.knex);
  if (opts.statsReplay > 0 && cursors.length > 0 && tailBeforeWarmup !== null && tailAfter !== null && tailAfter > tailBeforeWarmup) {
    if (cursors.some((c) => c.last_id !== tailAfter)) throw new Error(`stats cursors not at the outbox's end (${tailAfter}) before the replay: ${JSON.stringify(cursors)}`);
    const perRequest = (tailAfter - tailBeforeWarmup) / (opts.warmup + opts.count);
    const events = Math.min(Math.round(opts.statsReplay * perRequest), tailAfter - tailBeforeWarmup, 20_000);
    const from = tailAfter - events;
    const tR0 = Date.now();
    await db.knex('outbox_cursors').where('consumer', 'like', 'stats-%').update({ last_id: from });
    const deadline = Date.now() + 900_000;
    while ((await statsCursors(db.knex)).some((c) => c.last_id < tailAfter)) {
      if (Date.now() > deadline) throw new Error('the stats replay did not finish within 900 s');
      await new Promise((r) => setTimeout(r, 500));
    }
    await waitForIdle(pids, opts.idlePct, 600_000);
    const tR1 = Date.now();
    server.control('-d'); // part 5: the stats replay
    replay = { events, requests: events / perRequest, seconds: (tR1 - tR0) / 1000, from, to: tailAfter };
  }
  server.control('-i', 'off');
  const cpuS = processCpuSeconds(server.pid) - cpu0;
  const behind = await outboxBehind(db.knex);
  stopped = true;
  await server.stop();
  const died = server.died();
  if (died) throw new Error(died);
  const after = await writeCounts(db.knex);
  const log = logSummary(server.logFile);

  // The database must hold exactly the acknowledged writes: warm-up and measured requests all
  // answered 2xx, none was in flight at a cut-off (slack 0).
  const acked = opts.warmup + opts.count;
  const grew = opts.route === 'click'
    ? [['click_events', after.clickEvents - before.clickEvents], ['customers', after.customers - before.customers], ['referral_links.clicks', after.linkClicks - before.linkClicks]]
    : opts.route === 'lead'
    ? [['lead_events', after.leadEvents - before.leadEvents], ['customers in status lead', after.leadCustomers - before.leadCustomers]]
    : [['sale_events', after.saleEvents - before.saleEvents], ['commissions', after.commissions - before.commissions], ['platform_fees', after.platformFees - before.platformFees]];
  const verify = compareStored({ noun: `${opts.route}s`, acked, slack: 0, grew: /** @type {Array<[string, number]>} */ (grew) });

  const dumps = readDumps(outDir);
  if (![1, 2, 3, 4].every((p) => dumps.some((d) => d.part === p))) throw new Error(`callgrind dumps missing in ${outDir}: parts ${[...new Set(dumps.map((d) => d.part))].join(', ')}`);
  /** @typedef {ReturnType<typeof readDumps>[number]} Dump */
  /** @param {number[]} parts @param {(d: Dump) => number} [value] @param {(d: Dump) => boolean} [filter] */
  const sum = (parts, value = (d) => d.ir, filter = () => true) => dumps.filter((d) => parts.includes(d.part) && filter(d)).reduce((a, d) => a + value(d), 0);
  const WORK = [2, 3]; // the requests and the drain
  const IDLE = [1, 4];
  const reqS = (tLast - tStart) / 1000;
  const drainWallS = (tIdle - tLast) / 1000;
  const idleS = (tStart - tOn + tEnd - tIdle) / 1000;
  const work = sum(WORK);
  const compilerWork = sum(WORK, (d) => d.kinds.compiler);
  // The idle server's rate without its compiler work (compile jobs left from the warm-up land in
  // the idle windows too, and are not the clock's).
  const idleRate = (sum(IDLE) - sum(IDLE, (d) => d.kinds.compiler)) / idleS;
  const onLoop = (/** @type {Dump} */ d) => d.thread === 1;
  const loopIdleRate = sum(IDLE, undefined, onLoop) / idleS;
  const n = opts.count;
  const figures = {
    /** Everything the process executed from the first request to idle again. */
    all: work / n,
    /** The same without V8's compilers: the steady state's work, less sensitive to the warm-up. */
    steady: (work - compilerWork) / n,
    /** And without the idle server's rate over the requests' and the drain's wall-clock time. */
    steadyLessIdle: (work - compilerWork - idleRate * (reqS + drainWallS)) / n,
    /** The event loop alone, less its own idle rate (its timers) over the same time. */
    eventLoopLessIdle: (sum(WORK, undefined, onLoop) - loopIdleRate * (reqS + drainWallS)) / n,
    /** Only to the last answer (what the drain adds is the difference to `all`). */
    toLastAnswer: sum([2]) / n,
  };
  // The stats replay: the stats thread is the worker thread that did the replay's work; its own
  // idle rate (its polls) over the replay's time is taken off. Its count per request in the run is
  // then replaced by the replay's.
  /** @type {undefined | { thread: number, events: number, requests: number, perRequest: number, perRequestInRun: number, seconds: number }} */
  let statsReplay;
  if (replay) {
    const [top] = dumps.filter((d) => d.part === 5 && d.thread !== 1 && d.js).sort((a, b) => b.ir - a.ir);
    if (top) {
      const own = (/** @type {Dump} */ d) => d.thread === top.thread;
      const threadIdleRate = sum(IDLE, undefined, own) / idleS;
      const perRequest = (top.ir - threadIdleRate * replay.seconds) / replay.requests;
      const perRequestInRun = sum(WORK, undefined, own) / n;
      statsReplay = { thread: top.thread, events: replay.events, requests: Math.round(replay.requests), perRequest: Math.round(perRequest), perRequestInRun: Math.round(perRequestInRun), seconds: round(replay.seconds, 1) };
      Object.assign(figures, {
        allStatsReplayed: figures.all - perRequestInRun + perRequest,
        steadyStatsReplayed: figures.steady - perRequestInRun + perRequest,
        steadyLessIdleStatsReplayed: figures.steadyLessIdle - perRequestInRun + perRequest,
      });
    }
  }
  /** @param {(d: Dump) => boolean} filter */
  const perReq = (filter) => Math.round(sum(WORK, undefined, filter) / n);
  const byThreadGroup = { eventLoop: perReq((d) => d.thread === 1), jsWorkerThreads: perReq((d) => d.thread !== 1 && d.js), helperThreads: perReq((d) => d.thread !== 1 && !d.js) };
  const byKind = Object.fromEntries(KINDS.map((k) => [k, Math.round(sum(WORK, (d) => d.kinds[k]) / n)]));
  const threads = [...new Set(dumps.filter((d) => WORK.includes(d.part)).map((d) => d.thread))]
    .sort((a, b) => a - b)
    .map((thread) => ({ thread, js: dumps.some((d) => d.thread === thread && d.js), perRequest: perReq((d) => d.thread === thread), drainPerRequest: Math.round(sum([3], undefined, (d) => d.thread === thread) / n) }))
    .filter((x) => x.perRequest > 0);
  /** @type {Map<string, number>} */
  const fnCosts = new Map();
  for (const d of dumps.filter((x) => WORK.includes(x.part))) for (const [key, ir] of d.costs) fnCosts.set(key, (fnCosts.get(key) ?? 0) + ir);
  const top = [...fnCosts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 40)
    .map(([key, ir]) => {
      const [ob, fn] = key.split('\t');
      return { perRequest: Math.round(ir / n), share: round(ir / work, 4), kind: kindOf(ob, fn), fn, object: path.basename(ob) };
    });

  const result = {
    runId,
    at: started.toISOString(),
    machine: machine(),
    code,
    serverDir: opts.serverDir,
    options: opts,
    valgrind: spawnSync('valgrind', ['--version'], { encoding: 'utf8' }).stdout.trim(),
    irPerRequest: Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v)])),
    byThreadGroup,
    byKind,
    threads,
    idleIrPerSecond: Math.round(idleRate),
    statsReplay,
    ir: { idleBefore: sum([1]), requests: sum([2]), drain: sum([3]), idleAfter: sum([4]), afterLastDump: dumps.filter((d) => d.part > (replay ? 5 : 4)).reduce((a, d) => a + d.ir, 0) },
    seconds: { warmup: round(warmS, 1), requests: round(reqS, 1), drain: round(drainWallS, 1), idle: round(idleS, 1) },
    serverCpuSecondsInstrumented: round(cpuS, 1),
    drainReachedIdle: drainS < drainMaxS,
    outboxBehindAtEnd: behind,
    verify,
    serverLog: log,
    answers: measured.statuses,
    topFunctionsBySelfCost: top,
  };
  fs.writeFileSync(path.join(outDir, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);

  const r = opts.route;
  console.log(`measured: ${n} ${r}s in ${reqS.toFixed(1)} s (${(n / reqS).toFixed(0)}/s under callgrind), all 2xx; idle again ${drainWallS.toFixed(1)} s after the last answer${drainS >= drainMaxS ? ' (NOT idle: gave up waiting)' : ''}`);
  console.log(`Ir per ${r}: all ${fmt(figures.all)} | without V8's compilers ${fmt(figures.steady)} | that less the idle rate ${fmt(figures.steadyLessIdle)} | to the last answer ${fmt(figures.toLastAnswer)}`);
  if (statsReplay) {
    console.log(`  stats thread (callgrind thread ${statsReplay.thread}): ${fmt(statsReplay.perRequestInRun)} per ${r} in the run; ${fmt(statsReplay.perRequest)} per ${r} when it handled the last ${statsReplay.requests} ${r}s' ${statsReplay.events} events in one pass (${statsReplay.seconds} s)`);
    console.log(`  Ir per ${r} with the stats thread's work at one pass of ${statsReplay.events} events: all ${fmt(/** @type {any} */ (figures).allStatsReplayed)} | without V8's compilers ${fmt(/** @type {any} */ (figures).steadyStatsReplayed)} | that less the idle rate ${fmt(/** @type {any} */ (figures).steadyLessIdleStatsReplayed)}`);
  }
  console.log(`  by thread: event loop ${fmt(byThreadGroup.eventLoop)} (${fmt(figures.eventLoopLessIdle)} less its idle rate of ${fmt(loopIdleRate)} Ir/s), JS worker threads ${fmt(byThreadGroup.jsWorkerThreads)}, helper threads (GC, compiler, libuv) ${fmt(byThreadGroup.helperThreads)}`);
  console.log(`  by kind: ${KINDS.map((k) => `${k} ${fmt(byKind[k])}`).join(', ')}`);
  console.log(`  threads (callgrind ids, js: runs JavaScript): ${threads.map((x) => `${x.thread}${x.js ? ' js' : ''} ${fmt(x.perRequest)}`).join(', ')}`);
  console.log(`  idle server without compiler work: ${fmt(idleRate)} Ir/s over ${idleS.toFixed(0)} s before and after; × the ${(reqS + drainWallS).toFixed(0)} s of requests and drain = ${fmt((idleRate * (reqS + drainWallS)) / n)} per ${r}`);
  console.log(`  top functions by self cost per ${r}: ${top.slice(0, 12).map((x) => `${x.fn.slice(0, 60)} (${x.kind}) ${fmt(x.perRequest)}`).join('; ')}`);
  if (behind.some((b) => b.behind > 0)) console.log(`  outbox consumers behind at the end: ${behind.map((b) => `${b.consumer} ${b.behind}`).join(', ')}`);
  if (log.run.error) console.log(`  server log: ${log.run.error} errors: ${log.run.messages.map((m) => `${m.message} ×${m.count}`).join('; ')}`);
  console.log(`database: ${verify.text}`);
  console.log(`IR_RESULT ${JSON.stringify({ commit: code.commit, route: r, count: n, warmup: opts.warmup, ...result.irPerRequest, outDir })}`);
  if (!verify.ok) {
    console.error(`\n!! ${verify.text}`);
    return 3;
  }
  if (log.run.error) {
    console.error('\n!! the server logged errors during the run (server.log in the output directory)');
    return 1;
  }
  return 0;
}

main()
  .then(async (exit) => {
    await cleanup();
    process.exit(exit);
  })
  .catch(async (err) => {
    console.error(`instruction-counts: ${err.stack ?? err}`);
    await cleanup();
    process.exit(2);
  });
