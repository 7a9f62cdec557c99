/**
 * A diagnosis, not a benchmark: loaded into the measured server with
 *
 *   BENCH_SERVER_NODE_ARGS="--import ./apps/server/bench/sqlite-statement-times.mjs" \
 *     node apps/server/bench/run.mjs --db sqlite --routes sale --duration 8 --lead-pool 100000
 *
 * it times every SQLite statement each thread of the server runs (better-sqlite3 runs them
 * synchronously, so a statement's time is its thread's time) and, when the process exits, writes
 * per thread the statements by their longest run and their total: `<pid>-main.txt` (the event
 * loop) and `<pid>-t<n>.txt` (the stats, click writer and checkpointer threads) in
 * STATEMENT_TIMES_DIR (default: the system's temporary directory). The first line has the
 * thread's event-loop delay (max, p99, p99.9) and its garbage collections over 20 ms.
 * docs/performance.md, "Scans that grew with the outbox", was found with it.
 */
import { createRequire } from 'node:module';
import { isMainThread, threadId } from 'node:worker_threads';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serverPackage = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
const Database = createRequire(serverPackage)('better-sqlite3');
const outDir = process.env.STATEMENT_TIMES_DIR ?? os.tmpdir();

/** @type {Map<string, { n: number, ns: number, max: number }>} */
const stats = new Map();
const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
/** @type {string[]} */
const longGcs = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.duration > 20) longGcs.push(e.duration.toFixed(1));
}).observe({ entryTypes: ['gc'] });

const prepare = Database.prototype.prepare;
Database.prototype.prepare = function (/** @type {string} */ sql) {
  const statement = prepare.call(this, sql);
  for (const method of ['run', 'get', 'all']) {
    const original = statement[method];
    statement[method] = function (/** @type {unknown[]} */ ...args) {
      const start = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const ns = Number(process.hrtime.bigint() - start);
        let s = stats.get(sql);
        if (!s) stats.set(sql, (s = { n: 0, ns: 0, max: 0 }));
        s.n++;
        s.ns += ns;
        if (ns > s.max) s.max = ns;
      }
    };
  }
  return statement;
};

process.on('exit', () => {
  const ms = (/** @type {number} */ ns) => (ns / 1e6).toFixed(1);
  const head = `event loop delay max ${ms(delay.max)} ms, p99 ${ms(delay.percentile(99))}, p99.9 ${ms(delay.percentile(99.9))}; GC over 20 ms: ${longGcs.join(' ') || 'none'}`;
  const rows = [...stats]
    .sort((a, b) => b[1].max - a[1].max)
    .map(([sql, s]) => `max ${ms(s.max)} ms\ttotal ${ms(s.ns)} ms\t${s.n} runs\t${(s.ns / s.n / 1000).toFixed(1)} µs each\t${sql.replace(/\s+/g, ' ').slice(0, 240)}`);
  fs.writeFileSync(path.join(outDir, `${process.pid}-${isMainThread ? 'main' : `t${threadId}`}.txt`), [head, 'longest run first:', ...rows].join('\n') + '\n');
});
