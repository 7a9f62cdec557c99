#!/usr/bin/env node
/**
 * What the click's answer costs by itself: the bare server of the benchmark (bare-server.mjs)
 * measured as it is and changed, one step at a time, to give the real click answer — its headers,
 * a new request id per answer, and the request body parsed as JSON — with nothing else of the
 * server behind it. The answer is taken from a real click of the built server (apps/server/dist),
 * so the headers are the spec's, in the server's order.
 *
 *   node apps/server/bench/answer-cost.mjs [--rounds 3] [--duration 8] [--connections 50] [--server-dir DIR]
 *
 * Each round measures every variant once, in turn, with wrk and the click run's script (a new
 * X-Forwarded-For per request). The table gives each variant's rate per round and its median as a
 * share of the plain bare server's median: the share the click route could reach if everything
 * it does besides giving its answer cost nothing (docs/performance.md, "The 55% share, taken apart").
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildFixture, CLICK_BODY, CLICK_HEADERS } from './fixture.mjs';
import { createSqlite } from './db.mjs';
import { runWrk, wrkAvailable } from './load.mjs';
import { medianBy } from './measure.mjs';
import { seed, snapshotServer, startBareServer, startServer } from './processes.mjs';

const CLICK_PATH = '/api/v1/track/click';
/** Headers node:http adds to every answer by itself; the bare server gets them the same way. */
const ADDED_BY_NODE = new Set(['date', 'connection', 'keep-alive']);

/**
 * One click answered by the real server: its headers in order (as sent, names in their case) and
 * its body.
 * @param {string} url
 * @returns {Promise<{ headers: Array<[string, string]>, body: string }>}
 */
function clickAnswer(url) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${CLICK_PATH}`, { method: 'POST', headers: { ...CLICK_HEADERS, 'X-Forwarded-For': '203.0.113.7' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`the click answered ${res.statusCode}: ${body}`));
        /** @type {Array<[string, string]>} */
        const headers = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!ADDED_BY_NODE.has(res.rawHeaders[i].toLowerCase())) headers.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        }
        resolve({ headers, body });
      });
    });
    req.on('error', reject);
    req.end(CLICK_BODY);
  });
}

async function main() {
  const { values } = parseArgs({
    args: process.argv.slice(2).filter((a) => a !== '--'),
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '8' },
      connections: { type: 'string', default: '50' },
      'server-dir': { type: 'string' },
    },
  });
  const rounds = Number(values.rounds);
  const duration = Number(values.duration);
  const connections = Number(values.connections);
  for (const [name, n] of Object.entries({ rounds, duration, connections })) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be an integer ≥ 1`);
  }
  if (!wrkAvailable()) throw new Error('wrk is not installed (apt-get install wrk)');

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reftrack-answer-cost-'));
  try {
    // The real answer, from one click of the built server on a seeded SQLite file.
    const main = snapshotServer(tmpDir, values['server-dir']);
    const fixtureFile = path.join(tmpDir, 'fixture.json');
    fs.writeFileSync(fixtureFile, JSON.stringify(buildFixture(1)));
    const db = await createSqlite(tmpDir);
    seed(main, db.databaseUrl, fixtureFile);
    await db.knex.destroy();
    const server = await startServer({ main, databaseUrl: db.databaseUrl, processes: 1, logFile: path.join(tmpDir, 'server.log') });
    let answer;
    try {
      answer = await clickAnswer(server.url);
    } finally {
      await server.stop();
    }
    const requestIdHeader = answer.headers.find(([name]) => name.toLowerCase() === 'x-request-id')?.[0];
    if (!requestIdHeader) throw new Error('the click answer has no X-Request-ID header');
    console.log(`the click's answer: ${answer.headers.length} headers (${answer.headers.map(([n]) => n).join(', ')}), a body of ${Buffer.byteLength(answer.body)} bytes`);

    const variants = [
      { name: 'plain (the bench\'s bare server)', env: {} },
      { name: '+ the click\'s headers and body, fixed values', env: { BARE_ANSWER: JSON.stringify(answer) } },
      { name: '+ a new request id per answer', env: { BARE_ANSWER: JSON.stringify({ ...answer, requestIdHeader }) } },
      { name: '+ the request body parsed as JSON', env: { BARE_ANSWER: JSON.stringify({ ...answer, requestIdHeader, parse: true }) } },
    ];
    /** @type {number[][]} */
    const rates = variants.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (const [i, v] of variants.entries()) {
        const bare = await startBareServer(v.env);
        try {
          // A short warm-up, as the benchmark's runs have, then the measured run.
          await runWrk({ url: bare.url, path: CLICK_PATH, headers: CLICK_HEADERS, body: CLICK_BODY, connections, duration: 2, threads: 1, tmpDir });
          const res = await runWrk({ url: bare.url, path: CLICK_PATH, headers: CLICK_HEADERS, body: CLICK_BODY, connections, duration, threads: 1, tmpDir });
          if (res.non2xx > 0 || res.socketErrors > 0) throw new Error(`${v.name}: ${res.non2xx} non-2xx answers, ${res.socketErrors} socket errors`);
          rates[i].push(res.rps);
          console.log(`round ${r + 1}: ${v.name}: ${res.rps} req/s`);
        } finally {
          await bare.stop();
        }
      }
    }
    const median = (/** @type {number[]} */ xs) => medianBy(xs, (x) => x);
    const plain = median(rates[0]);
    console.log(`\n${'variant'.padEnd(50)}  ${'req/s per round'.padEnd(28)}  × plain (medians)`);
    for (const [i, v] of variants.entries()) {
      console.log(`${v.name.padEnd(50)}  ${rates[i].map((x) => x.toLocaleString('en-US')).join(' · ').padEnd(28)}  ${((100 * median(rates[i])) / plain).toFixed(1)}%`);
    }
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
