#!/usr/bin/env node
/**
 * Benchmark of outbound webhooks (docs/webhooks.md, docs/performance.md "Webhooks"): the sale
 * route offered a fixed rate (default 1,000 a second for 10 s) on a fresh database twice — without
 * any webhook endpoint, then with one endpoint subscribed to sale.created pointing at a local
 * receiver — and, in the second run, the delivery lag: receipt at the receiver minus the event's
 * `timestamp` (same machine, same clock), p50/p99 over every sale delivered.
 *
 *   node bench/webhooks.mjs [--db sqlite|postgres] [--rate 1000] [--duration 10] [--connections 50] [--programs 150]
 *
 * Uses the built server (apps/server/dist). Each sale key may make 120 sales a minute, so the
 * sales rotate over --programs keys (each with one customer that had a lead).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
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
const MAIN = path.join(SERVER_DIR, 'dist', 'main.js');
let ipN = 1;
const ip = () => `10.${(ipN >> 16) & 255}.${(ipN >> 8) & 255}.${ipN++ & 255}`;
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

async function post(url, body, headers = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': ip(), ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** A receiver that answers 204 and notes when each sale event arrived. */
async function receiver() {
  const lags = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      lags.push(Date.now() - Date.parse(event.timestamp));
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/hooks`, lags, close: () => new Promise((r) => server.close(r)) };
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
    if (hook) hook.lags.length = 0;
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
      while (hook.lags.length < ok && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const sorted = [...hook.lags].sort((a, b) => a - b);
      Object.assign(row, { delivered: hook.lags.length, lag_p50_ms: pct(sorted, 50), lag_p99_ms: pct(sorted, 99), lag_max_ms: sorted[sorted.length - 1] });
    }
    return row;
  } finally {
    await server.stop();
    await hook?.close();
    await db.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const without = await run(false);
const withHook = await run(true);
console.table([without, withHook]);
console.log(`sale rate with an endpoint: ${((withHook.sales_per_s / without.sales_per_s) * 100).toFixed(1)}% of the rate without (target ≥ 90%); delivery lag p99 ${withHook.lag_p99_ms} ms (target < 2000 ms)`);
