/**
 * The storage behind the memory rate limiter (part 8), in place of rate-limiter-flexible's own.
 *
 * The library's MemoryStorage arms a 60-second `setTimeout` for every key it sees, to delete the
 * key when its window ends. The click and lead buckets count per client address, so a busy click
 * route holds one live timer, closure and record per address seen in the last minute: 1.2 million
 * at 20,000 clicks/s, all surviving into the old generation, a tenth of the event loop's time in
 * garbage collection (docs/performance.md). This storage keeps the same windows and answers, and
 * frees ended windows in bulk: each window is filed under the second it ends, and one timer a
 * second drops the windows of the seconds that have passed.
 *
 * It has the interface RateLimiterMemory calls (incrby, set, get, delete, and `_storage` /
 * `_restoreRecord` for dump and restore), so the library's limiter logic (points, block durations,
 * execEvenly, RateLimiterRes) is unchanged; `withSweptStorage` installs it.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** One key's window: its points so far and when it ends (unix ms; null: never). */
interface Window {
  readonly key: string;
  value: number;
  readonly expiresAt: number | null;
}

const SWEEP_EVERY_MS = 1000;

/** Maps the keys are spread over (a power of two). */
const SHARDS = 256;

/**
 * A Map split by a hash of the key into SHARDS smaller ones. V8 grows a Map (and compacts it after
 * deletions) by copying it whole, in one step on the event loop: with one Map per bucket, the click
 * route's millionth address within a minute copied a million entries at once — 71 ms measured
 * alone, ~150 ms beside a busy writer thread — and stalled every request in flight, the slow third
 * round of the click benchmark (docs/performance.md, "The click lane's tail, found"). A shard
 * holds a 256th of the keys, so its copies are a 256th as long.
 */
class ShardedMap<V> implements Iterable<[string, V]> {
  private readonly maps: Array<Map<string, V>> = Array.from({ length: SHARDS }, () => new Map<string, V>());

  /**
   * FNV-1a of the key's last 16 UTF-16 code units: the keys of a bucket share their prefix (the
   * limiter's and the route's names) and differ at the end (the address, the key id).
   */
  private shard(key: string): Map<string, V> {
    let h = 0x811c9dc5;
    for (let i = Math.max(0, key.length - 16); i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
    return this.maps[h & (SHARDS - 1)];
  }

  get(key: string): V | undefined {
    return this.shard(key).get(key);
  }

  set(key: string, value: V): this {
    this.shard(key).set(key, value);
    return this;
  }

  delete(key: string): boolean {
    return this.shard(key).delete(key);
  }

  get size(): number {
    let n = 0;
    for (const map of this.maps) n += map.size;
    return n;
  }

  *keys(): IterableIterator<string> {
    for (const map of this.maps) yield* map.keys();
  }

  *[Symbol.iterator](): IterableIterator<[string, V]> {
    for (const map of this.maps) yield* map;
  }
}

export class SweptMemoryStorage {
  /** Read by RateLimiterMemory.dump() (iterated as key → { value, expiresAt }). */
  readonly _storage = new ShardedMap<Window>();
  /** Windows by the second (unix seconds) after which they have ended. */
  private readonly ending = new Map<number, Window[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Adds `value` points to the key's window, opening a new window when it has none or it ended. */
  incrby(key: string, value: number, durationSec: number): RateLimiterRes {
    const window = this._storage.get(key);
    if (window) {
      const msLeft = this.msLeft(window);
      if (window.expiresAt === null || msLeft > 0) {
        window.value += value;
        return new RateLimiterRes(0, msLeft, window.value, false);
      }
    }
    return this.set(key, value, durationSec);
  }

  /** Opens a new window of `durationSec` (0: never ends) holding `value` points. */
  set(key: string, value: number, durationSec: number): RateLimiterRes {
    const durationMs = durationSec * 1000;
    this.put(key, value, durationMs > 0 ? this.now() + durationMs : null);
    return new RateLimiterRes(0, durationMs === 0 ? -1 : durationMs, value, true);
  }

  get(key: string): RateLimiterRes | null {
    const window = this._storage.get(key);
    return window ? new RateLimiterRes(0, this.msLeft(window), window.value, false) : null;
  }

  /** Milliseconds left in the window, -1 for one that never ends (as the library answers). */
  private msLeft(window: Window): number {
    return window.expiresAt === null ? -1 : window.expiresAt - this.now();
  }

  delete(key: string): boolean {
    // Its entry under `ending` no longer matches the key's window and is skipped by the sweep.
    return this._storage.delete(key);
  }

  /** Used by RateLimiterMemory.restore(): a window from a dump, unless it has ended. */
  _restoreRecord(key: string, value: number, expiresAt: number | null): void {
    if (expiresAt !== null && (!Number.isFinite(expiresAt) || expiresAt <= this.now())) return;
    this.put(key, value, expiresAt);
  }

  /** Drops the windows that ended at or before `at`. Runs every second; public for tests. */
  sweep(at: number = this.now()): void {
    const second = Math.floor(at / 1000);
    for (const [ends, windows] of this.ending) {
      if (ends > second) continue;
      for (const window of windows) {
        if (this._storage.get(window.key) === window) this._storage.delete(window.key);
      }
      this.ending.delete(ends);
    }
    if (this.ending.size === 0) this.stop();
  }

  /** Stops the sweep timer (it restarts with the next window that can end). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private put(key: string, value: number, expiresAt: number | null): void {
    const window: Window = { key, value, expiresAt };
    this._storage.set(key, window);
    if (expiresAt === null) return;
    // Filed under the second it has ended by, so a sweep never drops a window still running.
    const ends = Math.ceil(expiresAt / 1000);
    const bucket = this.ending.get(ends);
    if (bucket) bucket.push(window);
    else this.ending.set(ends, [window]);
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
      // Expiry bookkeeping must never keep the process alive.
      this.timer.unref();
    }
  }
}

/**
 * Installs a SweptMemoryStorage in a RateLimiterMemory. The library keeps its store in the field
 * `_memoryStorage`; if a later version renames it, this throws at start-up instead of leaving the
 * per-key timers in place unnoticed.
 */
export function withSweptStorage(limiter: RateLimiterMemory, storage = new SweptMemoryStorage()): RateLimiterMemory {
  const fields = limiter as unknown as { _memoryStorage?: unknown };
  if (typeof (fields._memoryStorage as { incrby?: unknown } | undefined)?.incrby !== 'function') {
    throw new Error('rate-limiter-flexible: RateLimiterMemory no longer keeps its store in _memoryStorage; see src/http/swept-memory-storage.ts');
  }
  fields._memoryStorage = storage;
  return limiter;
}
