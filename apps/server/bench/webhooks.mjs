#!/usr/bin/env node
/**
 * Benchmark of outbound webhooks (docs/webhooks.md, docs/performance.md "Webhooks"): the sale
 * route offered a fixed rate (default 1,000 a second for 10 s) on a fresh database twice — without
 * any webhook endpoint, then with one endpoint subscribed to sale.created pointing at a local
 * receiver — and, in the second run, the delivery lag: receipt at the receiver minus the event's
 * `timestamp` (same machine, same clock), p50/p99 over every sale delivered.
 *
 *   node bench/webhooks.mjs [--db sqlite|postgres] [--rate 1000] [--duration 10] [--connections 50] [--programs 150] [--server-dir DIR]
 *
 * Uses the built server (apps/server/dist, or DIR/dist: an A/B run's other side). Each sale key may make 120 sales a minute, so the
 * sales rotate over --programs keys (each with one customer that had a lead).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { buildFixture, programDomain, programKey, programLink } from './fixture.mjs';
import { createPostgres, createSqlite, findPostgres } from './db.mjs';
import { seed, SERVER_DIR, serverEnv, startServer } from './processes.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const kind = args.db ?? 'sqlite';
const rate = Number(args.rate ?? 1000);
const duration = Number(args.duration ?? 10);
const connections = Number(args.connections ?? 50);
const programs = Number(args.programs ?? Math.ceil((rate * (duration + 1)) / 110));
const MAIN = path.join(args['server-dir'] ? path.resolve(args['server-dir']) : SERVER_DIR, 'dist', 'main.js');
let ipN = 1;
const ip = () => `10.${(ipN >> 16) & 255}.${(ipN >> 8) & 255}.${ipN++ & 255}`;
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

async function post(url, body, headers = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** The receiver (bench/webhook-receiver.mjs) in a process of its own; `lags()` reads what it noted. */
async function receiver() {
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), 'webhook-receiver.mjs')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`webhook receiver exited with code ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/hooks`,
    lags: async () => (await fetch(`${base}/lags`)).json(),
    close: () => new Promise((r) => (child.once('exit', r), child.kill())),
  };
}

async function run(withEndpoint) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-bench-wh-'));
  const db = kind === 'postgres' ? await createPostgres(await findPostgres()) : await createSqlite(tmp);
  const fixtureFile = path.join(tmp, 'fixture.json');
  fs.writeFileSync(fixtureFile, JSON.stringify(buildFixture(programs)));
  seed(MAIN, db.databaseUrl, fixtureFile);
  process.env.WEBHOOKS_ALLOW_PRIVATE_TARGETS = 'true';
  const server = await startServer({ main: MAIN, databaseUrl: db.databaseUrl, processes: 1, logFile: path.join(tmp, 'server.log') });
  const hook = withEndpoint ? await receiver() : null;
  try {
    if (hook) {
      const agentKey = execFileSync(process.execPath, [MAIN, 'agent-keys', 'create', '--workspace', '1', '--scopes', 'webhooks:manage'], { env: serverEnv({ DATABASE_URL: db.databaseUrl }), encoding: 'utf8' }).trim();
      const made = await post(`${server.url}/api/agent/v1/webhooks`, { url: hook.url, event_types: ['sale.created'] }, { authorization: `Bearer ${agentKey}` });
      if (made.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(made.body)}`);
    }
    // One customer with a lead per program.
    for (let n = 1; n <= programs; n++) {
      const click = await post(`${server.url}/api/v1/track/click`, { affiliate_url: `https://${programDomain(n)}/?aff=${programLink(n)}` });
      const lead = await post(`${server.url}/api/v1/track/lead`, { click_id: click.body.click_id, customer_key: `c${n}` }, { authorization: `Bearer ${programKey(n)}` });
      if (lead.status !== 200) throw new Error(`lead ${n}: ${lead.status}`);
    }
    const before = hook ? (await hook.lags()).length : 0;
    let i = 0;
    const result = await autocannon({
      url: server.url,
      connections,
      duration,
      overallRate: rate,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          setupRequest(req) {
            const n = (i % programs) + 1;
            const body = JSON.stringify({ transaction_id: `wh_${withEndpoint ? 'e' : 'n'}_${i++}`, amount_cents: 1999, customer_key: `c${n}` });
            return { ...req, method: 'POST', path: '/api/v1/track/sale', headers: { 'content-type': 'application/json', authorization: `Bearer ${programKey(n)}` }, body };
          },
        },
      ],
    });
    const ok = result['2xx'];
    const row = { run: withEndpoint ? 'one endpoint (sale.created)' : 'no endpoint', offered: rate, sales_per_s: Math.round(ok / duration), non2xx: result.non2xx, latency_p99_ms: result.latency.p99 };
    if (hook) {
      const deadline = Date.now() + 60_000;
      let lags = (await hook.lags()).slice(before);
      while (lags.length < ok && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        lags = (await hook.lags()).slice(before);
      }
      const sorted = [...lags].sort((a, b) => a - b);
      Object.assign(row, { delivered: lags.length, lag_p50_ms: pct(sorted, 50), lag_p99_ms: pct(sorted, 99), lag_max_ms: sorted[sorted.length - 1] });
      // Where the lag went, per delivery: event committed → delivery queued (the outbox consumer's
      // pass) → first attempt started (the worker's claim) → answered (the attempt itself).
      const stages = await db
        .knex('webhook_deliveries as d')
        .join('outbox_events as o', 'o.event_id', 'd.message_id')
        .join('webhook_attempts as a', 'a.delivery_id', 'd.id')
        .where('a.attempt', 1)
        .select(db.knex.raw('d.created_at - o.occurred_at as queued'), db.knex.raw('a.started_at - d.created_at as claimed'), 'a.duration_ms as sent');
      const stage = (name) => stages.map((r) => Number(r[name])).sort((a, b) => a - b);
      stageRows.push(...['queued', 'claimed', 'sent'].map((name) => ({ stage: name, p50_ms: pct(stage(name), 50), p99_ms: pct(stage(name), 99) })));
    }
    return row;
  } finally {
    await server.stop();
    await hook?.close();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const stageRows = [];
const without = await run(false);
const withHook = await run(true);
console.table([without, withHook]);
console.log('with an endpoint, per delivery: queued = event to delivery row (outbox pass), claimed = delivery row to first attempt, sent = the attempt');
console.table(stageRows);
console.log(`sale rate with an endpoint: ${((withHook.sales_per_s / without.sales_per_s) * 100).toFixed(1)}% of the rate without (target ≥ 90%); delivery lag p99 ${withHook.lag_p99_ms} ms (target < 2000 ms)`);
