/**
 * Benchmark of the Stripe intake's cost (docs/performance.md, "Stripe intake"): 2,000 programs
 * connected through the dashboard API, then `--parallel` (8) unsigned 500 KB requests at a time,
 * again and again for `--duration` seconds, while one client polls GET /healthz. Reports the
 * intake's request rate and the healthz latency (p50, p99, max) per scenario. Not a test: nothing
 * is asserted, the figures go to the performance page.
 *
 *   node bench/stripe-intake.mjs [--programs 2000] [--duration 10] [--parallel 8] [--server-dir DIR]
 *                                [--only NAME] [--profile]
 *
 * Scenarios (unsigned: a plausible Stripe-Signature header whose v1 matches nothing):
 * - idle: healthz alone;
 * - unknown path: the same bodies to a path no route answers, read and dropped: what receiving
 *   them costs without any intake work, the floor of the intake's figures on this machine;
 * - shared, names a program: POST /api/v1/webhooks/stripe, an event whose metadata.program_id names
 *   a connected program (one signature check; the release before checked every connection's secret);
 * - shared, names nothing: no account, no metadata (refused before any signature check);
 * - own address: POST /api/v1/webhooks/stripe/whe_… of the connections, in turn (one check).
 *
 * The requests come from a child process at the lowest CPU priority (see below), healthz from this
 * one. Every request carries its own X-Forwarded-For (TRUST_PROXY=1) and the own-address scenario
 * rotates over the 2,000 addresses, so the intake's rate limit runs but does not refuse: the
 * figures are the cost of the work itself. `--server-dir` measures another build of apps/server,
 * e.g. the release before built in a clone; a scenario its routes lack is reported as such.
 * SQLite, one server process; the database does not matter here, the signature work is CPU.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildFixture } from './fixture.mjs';
import { SERVER_DIR, round, seed, serverEnv, snapshotServer, startServer, waitForQuietHost } from './processes.mjs';
import { codeVersion, machine } from './report.mjs';
import { renderProfile, summarizeProfile } from './profile.mjs';

/**
 * The load generator: a child process of its own at the lowest CPU priority (`nice -n 19`). A real
 * sender's CPU is not the server's; here both share two cores, and the generator writing 500 KB
 * bodies as fast as it can would otherwise take CPU time from the server and from the healthz
 * probe (this process), and the figures would measure the generator.
 */
if (process.env.STRIPE_BENCH_LOAD) {
  const { host, port, parallel, durationMs, targets, bodyFile } = JSON.parse(process.env.STRIPE_BENCH_LOAD);
  const body = fs.readFileSync(bodyFile, 'utf8');
  const agent = new http.Agent({ keepAlive: true, maxSockets: parallel });
  const statuses = {};
  let sent = 0;
  let ip = 0;
  let next = 0;
  const payload = Buffer.from(body);
  const until = performance.now() + durationMs;
  const one = () =>
    new Promise((resolve, reject) => {
      ip++;
      const headers = {
        'content-type': 'application/json',
        'content-length': payload.length,
        // Plausible (fresh timestamp, a v1 signature), so the server does check it: it matches no secret.
        'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
        'x-forwarded-for': `10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`,
      };
      const req = http.request({ host, port, method: 'POST', path: targets[next++ % targets.length], agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < until) {
        const status = await one();
        sent++;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  agent.destroy();
  process.stdout.write(JSON.stringify({ sent, statuses, elapsedMs: performance.now() - started }));
  process.exit(0);
}

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== '--'),
  options: {
    programs: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '10' },
    parallel: { type: 'string', default: '8' },
    'body-bytes': { type: 'string', default: '500000' },
    'server-dir': { type: 'string' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});
const PROGRAMS = Number(values.programs);
const DURATION_S = Number(values.duration);
const PARALLEL = Number(values.parallel);
const BODY_BYTES = Number(values['body-bytes']);
const serverDir = path.resolve(values['server-dir'] ?? SERVER_DIR);
const repoRoot = path.resolve(SERVER_DIR, '..', '..');
/** The checkout the measured build comes from (another one with --server-dir). */
const measuredRoot = path.resolve(serverDir, '..', '..');

// A production-like server has its key in the environment (the release before ignores it).
process.env.ENCRYPTION_KEY ??= randomBytes(32).toString('base64');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-stripe-bench-'));
const main = snapshotServer(tmp, serverDir);
const databaseUrl = `sqlite:${path.join(tmp, 'bench.db')}`;
const fixtureFile = path.join(tmp, 'fixture.json');
fs.writeFileSync(fixtureFile, JSON.stringify(buildFixture(PROGRAMS)));
seed(main, databaseUrl, fixtureFile);
const cpuProfDir = values.profile ? path.join(tmp, 'profiles') : undefined;
const server = await startServer({ main, databaseUrl, processes: 1, logFile: path.join(tmp, 'server.log'), cpuProfDir });
const base = new URL(server.url);

let ipCounter = 0;
const nextIp = () => {
  ipCounter++;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
};

/**
 * One request over a keep-alive agent; resolves with the status and the time it took.
 * @param {http.Agent} agent @param {string} method @param {string} pathname
 * @param {Record<string, string>} headers @param {Buffer | string} [body]
 * @returns {Promise<{ status: number, ms: number, text: string }>}
 */
function request(agent, method, pathname, headers, body) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: base.port, method, path: pathname, agent, headers: { 'x-forwarded-for': nextIp(), ...headers, ...(body ? { 'content-length': Buffer.byteLength(body) } : {}) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Sign in as the fixture's owner and connect every program through the dashboard API.
const idToken = execFileSync(process.execPath, [main, 'dev-token', '--email', 'owner@acme.test'], { env: serverEnv({ DATABASE_URL: databaseUrl }), encoding: 'utf8' }).trim();
const setup = new http.Agent({ keepAlive: true, maxSockets: 8 });
const signIn = await new Promise((resolve, reject) => {
  const req = http.request({ host: base.hostname, port: base.port, method: 'POST', path: '/api/dashboard/session', agent: setup, headers: { 'content-type': 'application/json' } }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.headers['set-cookie']?.[0]?.split(';')[0]));
  });
  req.on('error', reject);
  req.end(JSON.stringify({ id_token: idToken }));
});
const connectStarted = performance.now();
/** @type {string[]} own intake address paths, where the build has them */
const addresses = [];
for (let first = 1; first <= PROGRAMS; first += 8) {
  const batch = Array.from({ length: Math.min(8, PROGRAMS - first + 1) }, (_, i) => first + i);
  const answers = await Promise.all(
    batch.map((n) =>
      request(setup, 'PUT', `/api/dashboard/programs/${n}/payments`, { 'content-type': 'application/json', cookie: /** @type {string} */ (signIn) }, JSON.stringify({ stripe_account_id: `acct_bench${n}`, webhook_secret: `whsec_bench${n}${'S'.repeat(24)}` })),
    ),
  );
  for (const a of answers) {
    if (a.status !== 200) throw new Error(`connecting a program answered ${a.status}: ${a.text}`);
    const intake = JSON.parse(a.text).data.intake_url;
    if (intake) addresses.push(new URL(intake).pathname);
  }
}
const connectS = (performance.now() - connectStarted) / 1000;

/** An unsigned Stripe-looking event of `bytes` bytes; `programId` goes in the object's metadata. */
function eventBody(bytes, programId) {
  const event = { id: `evt_${randomBytes(8).toString('hex')}`, object: 'event', type: 'checkout.session.completed', created: Math.floor(Date.now() / 1000), livemode: false, data: { object: { id: 'cs_bench', object: 'checkout.session', mode: 'payment', metadata: programId ? { program_id: String(programId) } : {}, padding: '' } } };
  event.data.object.padding = 'x'.repeat(bytes - JSON.stringify(event).length);
  return Buffer.from(JSON.stringify(event));
}
const namingBody = eventBody(BODY_BYTES, 1);
const anonymousBody = eventBody(BODY_BYTES);
const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]);

/**
 * Runs `PARALLEL` loops of intake requests (none for idle) for DURATION_S in the load worker,
 * while this thread polls healthz every 20 ms.
 * @param {string} name @param {string[] | undefined} targets paths the requests go to, in turn
 * @param {Buffer | undefined} body
 */
async function scenario(name, targets, body) {
  if (values.only && !name.includes(values.only)) return { name, skipped: 'not selected (--only)' };
  // Other work on the host (other users' tests) shows in every figure: wait for a quiet second first.
  const host = await waitForQuietHost(20, 60_000);
  const health = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const durationMs = DURATION_S * 1000;
  const load = targets
    ? new Promise((resolve, reject) => {
        const bodyFile = path.join(tmp, 'body.json');
        fs.writeFileSync(bodyFile, body ?? '');
        const spec = { host: base.hostname, port: base.port, parallel: PARALLEL, durationMs, targets, bodyFile };
        const child = spawn('nice', ['-n', '19', process.execPath, fileURLToPath(import.meta.url)], { env: { ...process.env, STRIPE_BENCH_LOAD: JSON.stringify(spec) }, stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited with ${code}`))));
      })
    : Promise.resolve(undefined);
  /** @type {number[]} */
  const healthz = [];
  const until = performance.now() + durationMs;
  const poll = (async () => {
    while (performance.now() < until) {
      const res = await request(health, 'GET', '/healthz', {});
      if (res.status !== 200) throw new Error(`healthz answered ${res.status}`);
      healthz.push(res.ms);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const [loadResult] = await Promise.all([load, poll]);
  health.destroy();
  const sorted = [...healthz].sort((a, b) => a - b);
  return {
    name,
    intakePerS: loadResult ? round(loadResult.sent / (loadResult.elapsedMs / 1000), 1) : null,
    statuses: loadResult?.statuses ?? {},
    healthzSamples: sorted.length,
    p50Ms: round(percentile(sorted, 50), 1),
    p99Ms: round(percentile(sorted, 99), 1),
    maxMs: round(sorted[sorted.length - 1] ?? 0, 1),
    hostBusyBeforePct: host.busyPct,
  };
}

const rows = [
  await scenario('idle (healthz alone)', undefined, undefined),
  await scenario('unknown path (body read and dropped)', ['/api/v1/no-such-route'], anonymousBody),
  await scenario('shared address, event names a program', ['/api/v1/webhooks/stripe'], namingBody),
  await scenario('shared address, event names nothing', ['/api/v1/webhooks/stripe'], anonymousBody),
  addresses.length > 0 ? await scenario('own address (one per connection)', addresses, anonymousBody) : { name: 'own address (one per connection)', skipped: 'this build has no per-connection addresses' },
];
await server.stop();
const died = server.unexpectedExit();
if (cpuProfDir) for (const file of fs.readdirSync(cpuProfDir)) console.log(renderProfile(summarizeProfile(path.join(cpuProfDir, file), 25)));
fs.rmSync(tmp, { recursive: true, force: true });

const code = codeVersion(measuredRoot, serverDir);
console.log(`\nStripe intake: ${PROGRAMS.toLocaleString('en')} connected programs (connected in ${connectS.toFixed(1)} s), ${PARALLEL} unsigned ${(BODY_BYTES / 1000).toFixed(0)} KB requests at a time, ${DURATION_S} s per scenario; ${serverDir === SERVER_DIR ? 'this build' : serverDir} (commit ${code.commit}${code.dirty ? ', sources changed since' : ''}, built ${code.distBuiltAt})`);
console.log('| scenario | intake req/s | answers | healthz samples | healthz p50 ms | p99 ms | max ms | target p99 < 50 ms | host busy before |');
console.log('|---|---:|---|---:|---:|---:|---:|---|---:|');
for (const r of rows) {
  if ('skipped' in r) {
    console.log(`| ${r.name} | — | ${r.skipped} | | | | | | |`);
    continue;
  }
  const answers = Object.entries(r.statuses).map(([status, n]) => `${n} × ${status}`).join(', ') || '—';
  console.log(`| ${r.name} | ${r.intakePerS ?? '—'} | ${answers} | ${r.healthzSamples} | ${r.p50Ms} | ${r.p99Ms} | ${r.maxMs} | ${r.p99Ms < 50 ? 'PASS' : 'FAIL'} | ${r.hostBusyBeforePct}% |`);
}
if (died) console.log(`\n${died}`);
const out = path.join(repoRoot, 'bench-results');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'stripe-intake.json'), JSON.stringify({ at: new Date().toISOString(), machine: machine(), code, serverDir, programs: PROGRAMS, parallel: PARALLEL, bodyBytes: BODY_BYTES, durationS: DURATION_S, connectS: round(connectS, 1), rows }, null, 2));
