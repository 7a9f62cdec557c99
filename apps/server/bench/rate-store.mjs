#!/usr/bin/env node
/**
 * The memory rate limiter's cost per client address: rate-limiter-flexible's own storage (a
 * record and a 60-second timer per key) against the server's (src/http/hashed-window-storage.ts),
 * with the click bucket's settings. One point each for N distinct addresses, as a click route
 * sees them at 20,000 new clients a second over one window; the longest single call; then the
 * heap they hold. For the server's storage, then a steady state: N more addresses on a clock that
 * moves 50 µs a point, so that windows end and generations are renewed as on a busy click route
 * (the library's timers run on the real clock, so it has no such phase here).
 *
 *   node apps/server/bench/rate-store.mjs [--clients 1200000]
 *
 * Each storage runs in a child process of its own, so one's garbage never weighs on the other.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { clients: { type: 'string', default: '1200000' }, storage: { type: 'string' } } });
const clients = Number(values.clients);
if (!Number.isInteger(clients) || clients < 1) throw new Error('--clients must be a positive integer');

if (!values.storage) {
  console.log(`Memory rate limiter, ${clients.toLocaleString('en')} distinct client addresses, one point each (click bucket: 60 points a minute)`);
  for (const storage of ['library', 'hashed', 'library', 'hashed']) {
    const run = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--storage', storage, '--clients', String(clients)], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${storage}: ${run.stderr}`);
    process.stdout.write(run.stdout);
  }
} else {
  const { RateLimiterMemory } = await import('rate-limiter-flexible');
  const { HashedWindowStorage, withHashedStorage } = await import('../dist/index.js');
  const options = { points: 60, duration: 60, keyPrefix: 'reftrack:rl:click' };
  let clock = Date.now();
  const limiter = values.storage === 'hashed' ? withHashedStorage(new RateLimiterMemory(options), new HashedWindowStorage(60_000, () => clock)) : new RateLimiterMemory(options);
  if (!globalThis.gc) throw new Error('run with node --expose-gc');
  globalThis.gc();
  const heap0 = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  /** N points for N new addresses from `from`, the clock moved by `step` ms each; µs per point and the longest call. */
  const points = async (from, n, step) => {
    // The longest single call: a store that copies itself whole as it grows stalls one request (and
    // every other one in flight) for that long.
    let longest = 0;
    const t0 = performance.now();
    for (let i = from; i < from + n; i++) {
      clock += step;
      const t = performance.now();
      await limiter.consume(`ip:${(i >>> 24) & 255}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
      longest = Math.max(longest, performance.now() - t);
    }
    return { us: ((performance.now() - t0) * 1000) / n, longest };
  };
  const fill = await points(0, clients, 0);
  globalThis.gc();
  const usage = process.memoryUsage();
  const heldMb = (usage.heapUsed + usage.arrayBuffers - heap0) / 1e6;
  const label = values.storage === 'hashed' ? 'hashed storage (server)' : 'library storage';
  let line = `${label.padEnd(24)} ${fill.us.toFixed(2)} µs per point (garbage collection included), longest call ${fill.longest.toFixed(1)} ms, memory held ${heldMb.toFixed(0)} MB`;
  if (values.storage === 'hashed') {
    const steady = await points(clients, clients, 0.05);
    globalThis.gc();
    const after = process.memoryUsage();
    line += `; steady state ${steady.us.toFixed(2)} µs per point, longest call ${steady.longest.toFixed(1)} ms, memory held ${((after.heapUsed + after.arrayBuffers - heap0) / 1e6).toFixed(0)} MB`;
  }
  console.log(line);
  // The library's timers would keep the process alive for a minute.
  process.exit(0);
}
