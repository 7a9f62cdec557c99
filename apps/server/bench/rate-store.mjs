#!/usr/bin/env node
/**
 * The memory rate limiter's cost per client address: rate-limiter-flexible's own storage (a
 * record and a 60-second timer per key) against the server's (src/http/swept-memory-storage.ts),
 * with the click bucket's settings. One point each for N distinct addresses, as a click route
 * sees them at 20,000 new clients a second over one window; the longest single call; then the
 * heap they hold.
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
  for (const storage of ['library', 'swept', 'library', 'swept']) {
    const run = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--storage', storage, '--clients', String(clients)], { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${storage}: ${run.stderr}`);
    process.stdout.write(run.stdout);
  }
} else {
  const { RateLimiterMemory } = await import('rate-limiter-flexible');
  const { withSweptStorage } = await import('../dist/index.js');
  const options = { points: 60, duration: 60, keyPrefix: 'reftrack:rl:click' };
  const limiter = values.storage === 'swept' ? withSweptStorage(new RateLimiterMemory(options)) : new RateLimiterMemory(options);
  if (!globalThis.gc) throw new Error('run with node --expose-gc');
  globalThis.gc();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  // The longest single call: a store that copies itself whole as it grows stalls one request (and
  // every other one in flight) for that long.
  let longest = 0;
  for (let i = 0; i < clients; i++) {
    const t = performance.now();
    await limiter.consume(`ip:${(i >>> 24) & 255}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
    longest = Math.max(longest, performance.now() - t);
  }
  const ms = performance.now() - t0;
  globalThis.gc();
  const heapMb = (process.memoryUsage().heapUsed - heap0) / 1e6;
  const label = values.storage === 'swept' ? 'swept storage (server)' : 'library storage';
  console.log(`${label.padEnd(24)} ${((ms * 1000) / clients).toFixed(2)} µs per point (garbage collection included), longest call ${longest.toFixed(1)} ms, heap held ${heapMb.toFixed(0)} MB`);
}
