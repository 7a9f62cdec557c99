/**
 * Benchmark of the stats API (docs/analytics.md "How far it scales"): a program with 10 million
 * clicks over a year — 200 partners with a link each, 40 countries, 60 referrer domains, UTM
 * sources, media and campaigns, leads and sales in two currencies — on SQLite and on PostgreSQL,
 * through the real route with a signed-in dashboard session. Measures a year's daily series with
 * one breakdown (the target: p99 < 50 ms), and a few neighbours.
 *
 * The rollup rows are generated directly, as the click batch would have written them for those
 * clicks (each hour's clicks allocated to partners and to each dimension's values in proportion to
 * fixed weights, with noise); replaying 10 million clicks through the server would take hours on
 * the benchmark host and measure the click lane, not the stats API.
 *
 *   node bench/stats.mjs [--clicks 10000000] [--duration 10] [--connections 1] [--engines sqlite,postgres]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { createPostgres, createSqlite, findPostgres } from './db.mjs';
import { SERVER_DIR, seed, serverEnv, startServer } from './processes.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const CLICKS = Number(arg('clicks', 10_000_000));
const DURATION = Number(arg('duration', 10));
const CONNECTIONS = Number(arg('connections', 1));
const ENGINES = String(arg('engines', 'sqlite,postgres')).split(',');
const MAIN = path.join(SERVER_DIR, 'dist', 'main.js');
/** `--load-only DIR`: load SQLite into DIR/bench.db and stop (to study the queries by hand). */
const LOAD_ONLY = arg('load-only', '');

const HOUR = 3_600_000;
const YEAR_START = Date.parse('2025-11-01T00:00:00Z');
const HOURS = 365 * 24;
const PARTNERS = 200;

// A deterministic generator, so every run and both engines get the same rows.
let state = 42;
const random = () => {
  state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
  return state / 2_147_483_648;
};
/** Zipf-like weights: a few large values and a long tail, as real traffic has. */
const zipf = (n, s = 1.1) => {
  const w = Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((x) => x / sum);
};
const DIMENSIONS = {
  country: { values: ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'CA', 'AU', 'NL', 'ES', ...Array.from({ length: 29 }, (_, i) => `C${i}`), ''], weights: zipf(40) },
  device: { values: ['desktop', 'mobile', 'tablet', ''], weights: [0.55, 0.38, 0.05, 0.02] },
  browser: { values: ['Chrome', 'Safari', 'Mobile Safari', 'Firefox', 'Edge', 'Samsung Internet', 'Opera', ''], weights: zipf(8, 1.3) },
  referrer: { values: [...Array.from({ length: 59 }, (_, i) => `site${i}.example`), ''], weights: zipf(60) },
  utm_source: { values: ['newsletter', 'twitter', 'youtube', 'blog', 'podcast', 'facebook', 'reddit', 'linkedin', 'tiktok', ''], weights: zipf(10) },
  utm_medium: { values: ['email', 'social', 'video', 'cpc', ''], weights: zipf(5) },
  utm_campaign: { values: [...Array.from({ length: 19 }, (_, i) => `campaign-${i}`), ''], weights: zipf(20) },
};
const PARTNER_WEIGHTS = zipf(PARTNERS, 1.0);
/** Traffic by hour of day (UTC): a day's curve. */
const DAY_CURVE = Array.from({ length: 24 }, (_, h) => 0.4 + 0.6 * Math.sin(((h - 6) / 24) * Math.PI * 2) ** 2);
const CURVE_SUM = DAY_CURVE.reduce((a, b) => a + b, 0);

/** `n` split over weights with noise, as integer counts (the sum is about n). */
const allocate = (n, weights) => weights.map((w) => Math.floor(n * w * (0.7 + 0.6 * random()) + random()));

/**
 * The rollup rows of a year: per hour (span 1), per UTC day (span 24) and per UTC month (span 720), at the link, program and
 * dimension levels (src/db/stats-rollups.ts). Yields arrays of rows in batches.
 */
function* rollupRows() {
  const perDay = CLICKS / 365;
  const day = new Map();
  const month = new Map();
  const monthOf = (hour) => {
    const d = new Date(hour * HOUR);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / HOUR;
  };
  const put = (map, key, row) => {
    const r = map.get(key);
    if (r) for (const c of ['clicks', 'unique_clicks', 'bot_clicks', 'leads', 'sales', 'revenue_cents']) r[c] += row[c];
    else map.set(key, { ...row });
  };
  let batch = [];
  for (let h = 0; h < HOURS; h++) {
    const bucket = Math.floor(YEAR_START / HOUR) + h;
    const dayBucket = Math.floor(bucket / 24) * 24;
    const clicks = Math.round(((perDay * DAY_CURVE[h % 24]) / CURVE_SUM) * (0.8 + 0.4 * random()));
    const rows = [];
    const row = (partner, link, dim, value, currency, n, sales = 0) => ({
      program_id: 1, span: 1, bucket, partner_id: partner, link_id: link, dim, value, currency,
      clicks: currency ? 0 : n, unique_clicks: currency ? 0 : Math.round(n * 0.8), bot_clicks: currency ? 0 : Math.round(n * 0.06), leads: currency ? 0 : Math.round(n * 0.05),
      sales, revenue_cents: sales * 4900, refunds: 0, refunded_cents: 0,
    });
    const currencies = (partner, link, dim, value, n) => {
      const sales = Math.round(n * 0.01 + random() * 0.5);
      if (sales === 0) return;
      const eur = Math.floor(sales / 3);
      if (sales - eur > 0) rows.push(row(partner, link, dim, value, 'USD', 0, sales - eur));
      if (eur > 0) rows.push(row(partner, link, dim, value, 'EUR', 0, eur));
    };
    rows.push(row(0, 0, '', '', '', clicks));
    currencies(0, 0, '', '', clicks);
    allocate(clicks, PARTNER_WEIGHTS).forEach((n, i) => {
      if (n === 0) return;
      rows.push(row(i + 1, i + 1, '', '', '', n));
      currencies(i + 1, i + 1, '', '', n);
    });
    for (const [dim, { values, weights }] of Object.entries(DIMENSIONS)) {
      allocate(clicks, weights).forEach((n, i) => {
        if (n === 0) return;
        rows.push(row(0, 0, dim, values[i], '', n));
        currencies(0, 0, dim, values[i], n);
      });
    }
    const monthBucket = monthOf(dayBucket);
    for (const r of rows) {
      put(day, `${r.partner_id}|${r.link_id}|${r.dim}|${r.value}|${r.currency}`, { ...r, span: 24, bucket: dayBucket });
      put(month, `${r.partner_id}|${r.link_id}|${r.dim}|${r.value}|${r.currency}`, { ...r, span: 720, bucket: monthBucket });
    }
    batch.push(...rows);
    if ((h + 1) % 24 === 0) {
      batch.push(...day.values());
      day.clear();
      // The month's rows once it is over (or the year is).
      if (h + 1 === HOURS || monthOf(bucket + 1) !== monthBucket) {
        batch.push(...month.values());
        month.clear();
      }
      yield batch;
      batch = [];
    }
  }
}

const COLUMNS = ['program_id', 'span', 'bucket', 'partner_id', 'link_id', 'dim', 'value', 'currency', 'clicks', 'unique_clicks', 'bot_clicks', 'leads', 'sales', 'revenue_cents', 'refunds', 'refunded_cents'];

async function load(db) {
  const started = Date.now();
  let rows = 0;
  state = 42;
  if (db.kind === 'sqlite') {
    const client = await db.knex.client.acquireConnection();
    const insert = client.prepare(`insert into stats_rollups (${COLUMNS.join(', ')}) values (${COLUMNS.map(() => '?').join(', ')})`);
    const day = client.transaction((batch) => {
      for (const r of batch) insert.run(COLUMNS.map((c) => r[c]));
    });
    for (const batch of rollupRows()) {
      day(batch);
      rows += batch.length;
    }
    await db.knex.client.releaseConnection(client);
  } else {
    const types = { program_id: 'int4', span: 'int2', bucket: 'int4', partner_id: 'int4', link_id: 'int4', dim: 'text', value: 'text', currency: 'text' };
    const sql = `insert into stats_rollups (${COLUMNS.join(', ')}) select * from unnest(${COLUMNS.map((c, i) => `$${i + 1}::${types[c] ?? 'int8'}[]`).join(', ')})`;
    for (const batch of rollupRows()) {
      await db.knex.raw(sql.replace(/\$(\d+)/g, '?'), COLUMNS.map((c) => batch.map((r) => r[c])));
      rows += batch.length;
    }
    // A settled table: autovacuum has set the visibility map that index-only scans need.
    await db.knex.raw('vacuum analyze stats_rollups');
  }
  return { rows, seconds: (Date.now() - started) / 1000 };
}

const fixture = {
  accounts: [{ email: 'owner@bench.test', name: 'Bench Owner' }],
  workspaces: [{ id: 1, name: 'Bench', members: [{ email: 'owner@bench.test', role: 'owner' }] }],
  programs: [{ id: 1, workspace: 1, name: 'Bench', domain: 'bench.test', commission_type: 'percent', commission_rate: 20 }],
  partners: Array.from({ length: PARTNERS }, (_, i) => ({ id: i + 1, name: `Partner ${i + 1}`, code: `p${i + 1}` })),
  enrollments: Array.from({ length: PARTNERS }, (_, i) => ({ partner: i + 1, program: 1 })),
  links: Array.from({ length: PARTNERS }, (_, i) => ({ short_link: `p${i + 1}`, partner: i + 1, program: 1, active: true })),
};

const QUERIES = [
  ['a year by day, by partner', 'from=2025-11-01&to=2026-10-31&interval=day&group_by=partner'],
  ['a year by day, by country', 'from=2025-11-01&to=2026-10-31&interval=day&group_by=country'],
  ['a year by day, by referrer, New York time', 'from=2025-11-01&to=2026-10-31&interval=day&group_by=referrer&tz=America/New_York'],
  ['a year by month, by utm_campaign', 'from=2025-11-01&to=2026-10-31&interval=month&group_by=utm_campaign'],
  ['a year by day, one partner, by link', 'from=2025-11-01&to=2026-10-31&interval=day&partner_id=3&group_by=link'],
  ['a month by hour, by device', 'from=2026-09-01&to=2026-09-30&interval=hour&group_by=device'],
];

async function run(kind) {
  const dir = LOAD_ONLY || fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-stats-'));
  const db = kind === 'sqlite' ? await createSqlite(dir) : await createPostgres(await findPostgres());
  const fixtureFile = path.join(dir, 'fixture.json');
  fs.writeFileSync(fixtureFile, JSON.stringify(fixture));
  seed(MAIN, db.databaseUrl, fixtureFile);
  const loaded = await load(db);
  if (LOAD_ONLY) {
    await db.knex.destroy();
    console.log(`loaded ${loaded.rows} rows into ${db.databaseUrl}`);
    process.exit(0);
  }
  const server = await startServer({ main: MAIN, databaseUrl: db.databaseUrl, processes: 1, logFile: path.join(dir, 'server.log') });
  try {
    const idToken = execFileSync(process.execPath, [MAIN, 'dev-token', '--email', 'owner@bench.test'], { env: serverEnv({ DATABASE_URL: db.databaseUrl }), encoding: 'utf8' }).trim();
    const signIn = await fetch(`${server.url}/api/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id_token: idToken }) });
    const cookie = signIn.headers.get('set-cookie').split(';')[0];
    let ip = 0;
    const results = [];
    for (const [name, query] of QUERIES) {
      const url = `${server.url}/api/dashboard/programs/1/stats?${query}`;
      const first = await fetch(url, { headers: { cookie } });
      const body = await first.json();
      if (first.status !== 200) throw new Error(`${name}: ${first.status} ${JSON.stringify(body)}`);
      const result = await autocannon({
        url,
        connections: CONNECTIONS,
        duration: DURATION,
        // The dashboard limit is per client address; every request comes from another one.
        requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie, 'x-forwarded-for': `10.8.${(ip >> 8) & 255}.${ip++ & 255}` } }) }],
      });
      results.push({ name, query, rps: Math.round(result.requests.average), p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx, clicks: body.data.totals.clicks, buckets: body.data.series.length, rows: body.data.breakdown?.rows.length ?? 0 });
    }
    return { kind, rollupRows: loaded.rows, loadSeconds: loaded.seconds, results };
  } finally {
    await server.stop();
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const reports = [];
for (const kind of ENGINES) reports.push(await run(kind));
for (const r of reports) {
  console.log(`\nStats API on ${r.kind}: ${CLICKS.toLocaleString('en')} clicks over a year as ${r.rollupRows.toLocaleString('en')} rollup rows (loaded in ${r.loadSeconds.toFixed(1)} s), ${CONNECTIONS} connection(s), ${DURATION} s each`);
  console.log('| query | req/s | p50 ms | p99 ms | non-2xx | clicks in answer | target p99 < 50 ms |');
  console.log('|---|---:|---:|---:|---:|---:|---|');
  for (const q of r.results) console.log(`| ${q.name} | ${q.rps} | ${q.p50Ms} | ${q.p99Ms} | ${q.non2xx} | ${q.clicks.toLocaleString('en')} | ${q.p99Ms < 50 && q.non2xx === 0 ? 'PASS' : 'FAIL'} |`);
}
fs.mkdirSync(path.join(SERVER_DIR, '..', '..', 'bench-results'), { recursive: true });
fs.writeFileSync(path.join(SERVER_DIR, '..', '..', 'bench-results', 'stats.json'), JSON.stringify({ at: new Date().toISOString(), clicks: CLICKS, connections: CONNECTIONS, durationS: DURATION, reports }, null, 2));
