import { describe, expect, it } from 'vitest';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HashedWindowStorage, withHashedStorage } from '../src/http/hashed-window-storage.js';

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
    const hashed = withHashedStorage(new RateLimiterMemory(options));
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
      const { ms: actualMs, ...actual } = await outcome(step(hashed));
      expect(actual).toEqual(expected);
      // Both count down from the same duration; a few milliseconds pass between the two calls.
      if (expectedMs === undefined || expectedMs < 0) expect(actualMs).toBe(expectedMs);
      else expect(Math.abs(Number(actualMs) - expectedMs)).toBeLessThan(50);
    }
  });

  it('a window ends after its duration: the next point opens a new one', async () => {
    const c = clock();
    const limiter = withHashedStorage(new RateLimiterMemory({ points: 2, duration: 60 }), new HashedWindowStorage(60_000, c.now));
    await limiter.consume('ip');
    await limiter.consume('ip');
    await expect(limiter.consume('ip')).rejects.toMatchObject({ remainingPoints: 0, msBeforeNext: 60_000 });
    c.advance(59_999);
    await expect(limiter.consume('ip')).rejects.toMatchObject({ msBeforeNext: 1 });
    c.advance(1);
    await expect(limiter.consume('ip')).resolves.toMatchObject({ remainingPoints: 1, consumedPoints: 1, isFirstInDuration: true, msBeforeNext: 60_000 });
  });

  it('a window opened late in one generation keeps its points through the next', () => {
    const c = clock();
    const storage = new HashedWindowStorage(60_000, c.now);
    // Opened at every second of two generations, each key's window is checked 59 s later.
    for (let s = 0; s < 120; s++) {
      storage.incrby(`k${s}`, 1, 60);
      if (s >= 59) expect(storage.incrby(`k${s - 59}`, 1, 60)).toMatchObject({ consumedPoints: 2, msBeforeNext: 1_000, isFirstInDuration: false });
      c.advance(1_000);
    }
  });

  it('ended windows are dropped a generation later, with no timer; running ones are kept', () => {
    const c = clock();
    const storage = new HashedWindowStorage(60_000, c.now);
    for (let i = 0; i < 10_000; i++) storage.incrby(`early${i}`, 1, 60);
    expect(storage.windows).toBe(10_000);
    c.advance(30_000);
    storage.incrby('late', 1, 60);
    // Two generations on, every shard has been renewed twice by a point of its own.
    c.advance(120_000);
    for (let i = 0; i < 1_000; i++) storage.incrby(`new${i}`, 1, 60);
    expect(storage.windows).toBeLessThan(1_100);
    expect(storage.get('early0')).toBeNull();
    expect(storage.get('late')).toBeNull();
    expect(storage.get('new0')).toMatchObject({ consumedPoints: 1 });
  });

  it('keeps every window exact while its tables grow, and drops only ended ones', () => {
    const c = clock();
    const storage = new HashedWindowStorage(60_000, c.now);
    for (let i = 0; i < 20_000; i++) storage.incrby(`short${i}`, 1, 1);
    c.advance(1_000);
    // The short windows have ended: the next 50,000 keys grow the tables past them.
    for (let i = 0; i < 50_000; i++) storage.incrby(`ip${i}`, 1 + (i % 3), 60);
    for (let i = 0; i < 50_000; i++) expect(storage.get(`ip${i}`)?.consumedPoints).toBe(1 + (i % 3));
    for (let i = 0; i < 20_000; i += 997) expect(storage.get(`short${i}`)).toBeNull();
    expect(storage.windows).toBeLessThan(70_000);
  });

  it('a block longer than the window, and a window that never ends, are kept by key and replace the running window', async () => {
    const c = clock();
    const limiter = withHashedStorage(new RateLimiterMemory({ points: 2, duration: 60 }), new HashedWindowStorage(60_000, c.now));
    await limiter.consume('a');
    await limiter.block('a', 600);
    await expect(limiter.consume('a')).rejects.toMatchObject({ consumedPoints: 4, msBeforeNext: 600_000 });
    c.advance(600_000);
    // The block ended, and the window it replaced does not come back.
    await expect(limiter.consume('a')).resolves.toMatchObject({ consumedPoints: 1, isFirstInDuration: true });
    await limiter.set('b', 1, 0);
    c.advance(10 * 60_000);
    await expect(limiter.consume('b')).resolves.toMatchObject({ consumedPoints: 2, msBeforeNext: -1 });
    expect(await limiter.delete('b')).toBe(true);
    await expect(limiter.consume('b')).resolves.toMatchObject({ consumedPoints: 1, isFirstInDuration: true });
  });

  it('dump and restore need the keys it does not keep: both refuse with an error that says so', () => {
    const limiter = withHashedStorage(new RateLimiterMemory({ points: 5, duration: 60 }));
    expect(() => limiter.dump()).toThrow(/keeps no keys/);
    expect(() => limiter.restore({ version: 1, storage: [{ key: 'a', value: 2, expiresAt: Date.now() + 10_000 }] })).toThrow(/keeps no keys/);
  });

  it('refuses a limiter whose store it cannot replace, rather than keep the library’s records unnoticed', () => {
    const limiter = new RateLimiterMemory({ points: 1, duration: 1 });
    delete (limiter as unknown as { _memoryStorage?: unknown })._memoryStorage;
    expect(() => withHashedStorage(limiter)).toThrow(/_memoryStorage/);
  });
});
