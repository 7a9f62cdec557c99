/**
 * Benchmark of the event listing (spec 4.6) on SQLite with one million stored events in one
 * program: page 1, and a page narrowed by dateFrom/dateTo, through the real route with a signed-in
 * dashboard session. Prints requests/s and p50/p99 latency; target p99 < 20 ms.
 *
 *   node bench/listing.mjs [--events 1000000] [--duration 10] [--connections 10]
 */
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { freePort, SERVER_DIR, waitFor200, stopChild } from './processes.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const EVENTS = arg('events', 1_000_000);
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 10);
const MAIN = path.join(SERVER_DIR, 'dist', 'main.js');
const require = createRequire(path.join(SERVER_DIR, 'package.json'));
const Database = require('better-sqlite3');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-listing-'));
const dbFile = path.join(dir, 'listing.db');
const env = { ...process.env, DATABASE_URL: `sqlite:${dbFile}`, LOG_LEVEL: 'warn', TRUST_PROXY: '1' };
const fixture = {
  accounts: [{ email: 'owner@bench.test', name: 'Bench Owner' }],
  workspaces: [{ id: 1, name: 'Bench', members: [{ email: 'owner@bench.test', role: 'owner' }] }],
  programs: [{ id: 1, workspace: 1, name: 'Bench', domain: 'bench.test', commission_type: 'percent', commission_rate: 20 }],
  partners: [{ id: 1, name: 'Pat', code: 'pat' }],
  enrollments: [{ partner: 1, program: 1 }],
  links: [{ short_link: 'pat', partner: 1, program: 1, active: true }],
};
fs.writeFileSync(path.join(dir, 'fixture.json'), JSON.stringify(fixture));
execFileSync(process.execPath, [MAIN, 'seed', '--file', path.join(dir, 'fixture.json')], { env, stdio: 'ignore' });

// One million events over the last 90 days: 80% clicks, 15% leads, 5% sales, 1% of each test-flagged.
const started = Date.now();
const db = new Database(dbFile);
db.pragma('journal_mode = WAL');
const END = Date.parse('2026-11-01T00:00:00Z');
const SPAN = 90 * 86_400_000;
const click = db.prepare('insert into click_events (program_id, link_id, partner_id, click_id, session_id, page_url, device_type, device_os, browser_name, is_test, click_timestamp, created_at) values (1, 1, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
const lead = db.prepare("insert into lead_events (program_id, click_id, customer_key, provisional, source, is_test, lead_timestamp, created_at) values (1, ?, ?, 0, 'server', ?, ?, ?)");
const sale = db.prepare("insert into sale_events (program_id, click_id, processor_event_id, amount_cents, currency, payment_status, is_recurring, is_test, sale_date, created_at) values (1, ?, ?, ?, 'USD', 'paid', 0, ?, ?, ?)");
db.transaction(() => {
  for (let i = 0; i < EVENTS; i++) {
    const at = END - Math.floor((i / EVENTS) * SPAN);
    const id = `clk_bench${i}`;
    const test = i % 100 === 0 ? 1 : 0;
    const r = i % 20;
    if (r < 16) click.run(id, `s${i}`, 'https://bench.test/', 'desktop', 'Mac OS', 'Chrome', test, at, at);
    else if (r < 19) lead.run(id, `u${i}`, test, at, at);
    else sale.run(id, `bench_${i}`, 1000 + (i % 5000), test, at, at);
  }
})();
db.close();
const loadSeconds = (Date.now() - started) / 1000;

const port = await freePort();
const server = spawn(process.execPath, [MAIN, 'start'], { env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${port}`;
await waitFor200(`${base}/healthz`, server);
const idToken = execFileSync(process.execPath, [MAIN, 'dev-token', '--email', 'owner@bench.test'], { env, encoding: 'utf8' }).trim();
const signIn = await fetch(`${base}/api/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id_token: idToken }) });
const cookie = signIn.headers.get('set-cookie').split(';')[0];

let ipCounter = 0;
async function measure(name, pathAndQuery) {
  const first = await (await fetch(base + pathAndQuery, { headers: { cookie } })).json();
  const result = await autocannon({
    url: base + pathAndQuery,
    connections: CONNECTIONS,
    duration: DURATION,
    // The dashboard limit is per client address; every request comes from another one.
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie, 'x-forwarded-for': `10.9.${(ipCounter >> 8) & 255}.${ipCounter++ & 255}` } }) }],
  });
  const non2xx = result.non2xx;
  return { name, query: pathAndQuery, rps: Math.round(result.requests.average), p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx, total: first.meta?.pagination?.total, first: first.data?.[0]?.timestamp };
}

const rows = [
  await measure('page 1, all types', '/api/tracking/events/1?page=1&pageSize=10'),
  await measure('page 3, all types, pageSize 100', '/api/tracking/events/1?page=3&pageSize=100'),
  await measure('date-narrowed page (one week, 45 days back)', '/api/tracking/events/1?page=2&pageSize=20&dateFrom=2026-09-10&dateTo=2026-09-16'),
  await measure('clicks only, date-narrowed', '/api/tracking/events/1?eventType=click&pageSize=50&dateFrom=2026-08-10T00:00:00Z&dateTo=2026-08-11T00:00:00Z'),
];
await stopChild(server);
fs.rmSync(dir, { recursive: true, force: true });

console.log(`\nEvent listing on SQLite: ${EVENTS.toLocaleString('en')} events in one program (loaded in ${loadSeconds.toFixed(1)} s), ${CONNECTIONS} connections, ${DURATION} s each`);
console.log('| query | req/s | p50 ms | p99 ms | non-2xx | target p99 < 20 ms |');
console.log('|---|---:|---:|---:|---:|---|');
for (const r of rows) console.log(`| ${r.name} | ${r.rps} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${r.p99Ms < 20 && r.non2xx === 0 ? 'PASS' : 'FAIL'} |`);
fs.mkdirSync(path.join(SERVER_DIR, '..', '..', 'bench-results'), { recursive: true });
fs.writeFileSync(path.join(SERVER_DIR, '..', '..', 'bench-results', 'listing.json'), JSON.stringify({ at: new Date().toISOString(), events: EVENTS, connections: CONNECTIONS, durationS: DURATION, rows }, null, 2));
