import { describe, expect, it } from 'vitest';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { SweptMemoryStorage, withSweptStorage } from '../src/http/swept-memory-storage.js';

/** A clock the test moves by hand. */
function clock(start = 1_800_000_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** A limiter call's outcome, resolved or rejected, as plain data; `ms` is its msBeforeNext. */
async function outcome(call: Promise<unknown>): Promise<{ kind: string; value?: unknown; ms?: number }> {
  const fields = (kind: string, r: RateLimiterRes) => ({ kind, value: { remainingPoints: r.remainingPoints, consumedPoints: r.consumedPoints, isFirstInDuration: r.isFirstInDuration }, ms: r.msBeforeNext });
  try {
    const value = await call;
    return value instanceof RateLimiterRes ? fields('resolved', value) : { kind: 'value', value };
  } catch (rejection) {
    return fields('rejected', rejection as RateLimiterRes);
  }
}

describe('8 limits: the memory store', () => {
  it.each([
    ['windows of 60 s', { points: 3, duration: 60, blockDuration: 30, keyPrefix: 't' }],
    ['windows that never end (duration 0)', { points: 3, duration: 0 }],
  ])('answers every limiter call as rate-limiter-flexible’s own storage does: %s', async (_, options) => {
    const library = new RateLimiterMemory(options);
    const swept = withSweptStorage(new RateLimiterMemory(options));
    const steps: Array<(l: RateLimiterMemory) => Promise<RateLimiterRes | boolean | null>> = [
      (l) => l.consume('a'),
      (l) => l.consume('a', 2),
      (l) => l.consume('a'), // over the limit: refused, and blocked for blockDuration
      (l) => l.consume('a'),
      (l) => l.get('a'),
      (l) => l.consume('b'),
      (l) => l.penalty('b', 2),
      (l) => l.reward('b', 1),
      (l) => l.get('b'),
      (l) => l.block('c', 10),
      (l) => l.consume('c'),
      (l) => l.set('d', 1, 0),
      (l) => l.consume('d', 1),
      (l) => l.delete('b'),
      (l) => l.get('b'),
      (l) => l.consume('b'),
    ];
    for (const step of steps) {
      const { ms: expectedMs, ...expected } = await outcome(step(library));
      const { ms: actualMs, ...actual } = await outcome(step(swept));
      expect(actual).toEqual(expected);
      // Both count down from the same duration; a few milliseconds pass between the two calls.
      if (expectedMs === undefined || expectedMs < 0) expect(actualMs).toBe(expectedMs);
      else expect(Math.abs(Number(actualMs) - expectedMs)).toBeLessThan(50);
    }
    expect(swept.dump().storage.map((s) => s.key).sort()).toEqual(library.dump().storage.map((s) => s.key).sort());
  });

  it('a window ends after its duration: the next point opens a new one', async () => {
    const c = clock();
    const limiter = withSweptStorage(new RateLimiterMemory({ points: 2, duration: 60 }), new SweptMemoryStorage(c.now));
    await limiter.consume('ip');
    await limiter.consume('ip');
    await expect(limiter.consume('ip')).rejects.toMatchObject({ remainingPoints: 0, msBeforeNext: 60_000 });
    c.advance(59_999);
    await expect(limiter.consume('ip')).rejects.toMatchObject({ msBeforeNext: 1 });
    c.advance(1);
    await expect(limiter.consume('ip')).resolves.toMatchObject({ remainingPoints: 1, consumedPoints: 1, isFirstInDuration: true, msBeforeNext: 60_000 });
  });

  it('the sweep drops ended windows and keeps running ones', () => {
    const c = clock();
    const storage = new SweptMemoryStorage(c.now);
    try {
      for (let i = 0; i < 1000; i++) storage.incrby(`early${i}`, 1, 60);
      c.advance(30_000);
      storage.incrby('late', 1, 60);
      storage.set('forever', 1, 0);
      storage.sweep(c.now() + 29_999);
      expect(storage._storage.size).toBe(1002);
      storage.sweep(c.now() + 30_000);
      expect([...storage._storage.keys()].sort()).toEqual(['forever', 'late']);
      storage.sweep(c.now() + 60_000);
      expect([...storage._storage.keys()]).toEqual(['forever']);
    } finally {
      storage.stop();
    }
  });

  it('a key opened again after its window ended is not dropped with the old window', () => {
    const c = clock();
    const storage = new SweptMemoryStorage(c.now);
    try {
      storage.incrby('ip', 1, 1);
      c.advance(1000);
      // The old window ended but was not swept yet; this point opens the key's next window.
      expect(storage.incrby('ip', 1, 60).isFirstInDuration).toBe(true);
      storage.sweep();
      expect(storage.get('ip')).toMatchObject({ consumedPoints: 1, msBeforeNext: 60_000 });
    } finally {
      storage.stop();
    }
  });

  it('restore keeps the windows of a dump that have not ended', () => {
    // The library itself decides what has ended by the real clock.
    const c = clock(Date.now());
    const limiter = withSweptStorage(new RateLimiterMemory({ points: 5, duration: 60 }), new SweptMemoryStorage(c.now));
    const now = c.now();
    const counts = limiter.restore({ version: 1, storage: [{ key: 'a', value: 2, expiresAt: now + 10_000 }, { key: 'b', value: 1, expiresAt: now - 1 }, { key: 'c', value: 4, expiresAt: null }] });
    expect(counts).toEqual({ invalid: 0, expired: 1, restored: 2 });
    // A dump lists the windows in no set order (the store spreads its keys over shards).
    const dumped = limiter.dump().storage.sort((x, y) => String(x.key).localeCompare(String(y.key)));
    expect(dumped).toEqual([{ key: 'a', value: 2, expiresAt: now + 10_000 }, { key: 'c', value: 4, expiresAt: null }]);
  });

  it('refuses a limiter whose store it cannot replace, rather than keep the per-key timers unnoticed', () => {
    const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
    delete (limiter as unknown as { _memoryStorage?: unknown })._memoryStorage;
    expect(() => withSweptStorage(limiter)).toThrow(/_memoryStorage/);
  });
});
