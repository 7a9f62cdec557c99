/**
 * Command-line options of `pnpm bench` (see run.mjs for the list), checked once.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

/**
 * @typedef {object} Options
 * @property {'sqlite' | 'postgres' | 'both' | undefined} db  undefined: both when PostgreSQL answers
 * @property {number} duration    measured seconds per run
 * @property {number} warmup      unmeasured seconds before each run
 * @property {number} connections
 * @property {number} processes   server processes (node:cluster when > 1)
 * @property {number} threads     wrk threads
 * @property {number} programs    programs (each with its own key and link) in the fixture
 * @property {number} leadPool    click ids made for the lead run
 * @property {'wrk' | 'autocannon' | undefined} loadgen  the click runs' tool; undefined: wrk when installed
 * @property {string[]} routes
 * @property {boolean} profile    --cpu-prof on the server of each measured run
 * @property {string | undefined} serverDir  another build of apps/server to measure (an A/B run's other side)
 */

/** @returns {Options} */
export function parseOptions() {
  const args = process.argv.slice(2).filter((a) => a !== '--');
  const { values } = parseArgs({
    args,
    options: {
      db: { type: 'string' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '50' },
      processes: { type: 'string', default: '1' },
      warmup: { type: 'string', default: '2' },
      threads: { type: 'string', default: '1' },
      programs: { type: 'string', default: '2000' },
      'lead-pool': { type: 'string' },
      loadgen: { type: 'string' },
      routes: { type: 'string', default: 'click,lead,sale' },
      profile: { type: 'boolean', default: false },
      'server-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(fs.readFileSync(new URL('./run.mjs', import.meta.url), 'utf8').split('\n').slice(2, 14).join('\n'));
    process.exit(0);
  }
  const int = (name, min) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
    return n;
  };
  const duration = int('duration', 1);
  const warmup = int('warmup', 0);
  const routes = values.routes.split(',').map((r) => r.trim());
  for (const r of routes) if (!['click', 'lead', 'sale'].includes(r)) throw new Error(`--routes: unknown route ${r}`);
  if (values.db && !['sqlite', 'postgres', 'both'].includes(values.db)) throw new Error('--db must be sqlite, postgres or both');
  if (values.loadgen && !['wrk', 'autocannon'].includes(values.loadgen)) throw new Error('--loadgen must be wrk or autocannon');
  return {
    db: values.db,
    duration,
    warmup,
    connections: int('connections', 1),
    processes: int('processes', 1),
    threads: int('threads', 1),
    programs: int('programs', 1),
    // Enough click ids for a lead run at 6,000/s, three times the target; the run stops early
    // (and says so) if the route is faster than that, rather than reuse an id (a 400). Making
    // them is the slow part of the benchmark: clicks spread over every program's link.
    leadPool: values['lead-pool'] ? int('lead-pool', 1) : (duration + warmup) * 6000,
    loadgen: values.loadgen,
    routes,
    profile: values.profile,
    serverDir: values['server-dir'],
  };
}

