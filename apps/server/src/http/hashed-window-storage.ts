/**
 * The storage behind the memory rate limiter (part 8), in place of rate-limiter-flexible's own.
 *
 * The click and lead buckets count per client address, so a busy click route holds a window for
 * every address seen in the last minute: 1.2 million at 20,000 new clients a second. The library's
 * storage keeps a record, a key string and a 60-second timer per window; the server's previous one
 * (a Map of records swept once a second) dropped the timers but still held ~165 bytes of heap per
 * window — 200 MB that every major collection had to mark — and its lookups walked a Map of a
 * million entries: 2.6 µs a point, 4.4% of the click lane's event loop in the Map's get and set
 * alone, and the rate limiter 6% of it in all (docs/performance.md, "The rate limiter's windows in
 * typed arrays").
 *
 * Here a window is three numbers in a typed array: a 52-bit hash of its key, when it ends, and its
 * points. No object or string is kept per window, so the garbage collector never walks them, and
 * nothing needs a timer: windows live in two generations of tables, as the unique-click window's
 * sightings do (domain/unique-clicks.ts). A generation is the limiter's duration long; a window
 * opened in one has ended by the end of the next, so the older table is emptied whole when a third
 * begins. The tables are spread over SHARDS shards, each renewed and grown on its own, so no
 * request waits for more than a 64th of the store to be copied or cleared.
 *
 * Windows longer than a generation (a block longer than the limiter's duration, or one that never
 * ends) are rare and kept exactly, by key, in a Map of their own.
 *
 * What the hash gives up: two keys share a 52-bit hash with a probability of about 2^-52 per pair,
 * so at 1.2 million windows a minute two clients share one window about once in 6,000 minutes of
 * that load; at a realistic few thousand, never in practice. The library's dump() and restore()
 * need the keys, which are not kept; the server uses neither, and both refuse with an error here.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { hash52, hashLanes, lanes } from '../two-lane-hash.js';

/** Shards per storage (a power of two). */
const SHARDS = 64;
/** Slots of a new table (a power of two). */
const MIN_SLOTS = 64;
/** A table doubles when more than 70% of its slots are taken (linear probing stays short there). */
const MAX_LOAD = 0.7;
/** Numbers per slot: the key's hash (0: empty slot), when the window ends (unix ms), its points. */
const STRIDE = 3;

/** One generation of one shard: open addressing with linear probing. */
class Table {
  readonly slots: Float64Array;
  readonly mask: number;
  /** Slots taken, ended windows included (they are dropped when the table grows). */
  size = 0;

  constructor(readonly capacity: number) {
    this.slots = new Float64Array(capacity * STRIDE);
    this.mask = capacity - 1;
  }

  /** The offset of `hash`'s slot, or of the empty slot where it would go. */
  find(hash: number, start: number): number {
    const slots = this.slots;
    let i = start & this.mask;
    for (;;) {
      const at = i * STRIDE;
      const h = slots[at];
      if (h === hash || h === 0) return at;
      i = (i + 1) & this.mask;
    }
  }

  /** The offset of `hash`'s window when it is still running at `now`, else -1. */
  live(hash: number, start: number, now: number): number {
    const at = this.find(hash, start);
    return this.slots[at] === hash && this.slots[at + 1] > now ? at : -1;
  }
}

interface Shard {
  current: Table;
  previous: Table;
  /** When `current`'s generation began (unix ms). */
  generationStart: number;
}

/** A window longer than a generation, by key. `expiresAt` null: it never ends. */
interface LongWindow {
  value: number;
  expiresAt: number | null;
}

/** The limiter's answer for a running long window (msBeforeNext -1: it never ends). */
function longAnswer(window: LongWindow, now: number): RateLimiterRes {
  return new RateLimiterRes(0, window.expiresAt === null ? -1 : window.expiresAt - now, window.value, false);
}

/** The slots a table needs to hold `windows` windows under MAX_LOAD. */
function capacityFor(windows: number): number {
  let capacity = MIN_SLOTS;
  while (capacity * MAX_LOAD < windows) capacity *= 2;
  return capacity;
}

// The key's hash, from hashKey: its 52 bits (never 0), the table slot to probe from, and its shard.
let keyHash = 0;
let keySlot = 0;
let keyShard = 0;

/**
 * The key's two hash lanes (two-lane-hash.ts): the first picks the slot, the second the shard, and
 * together they make the 52-bit hash. Results go to module variables, so a point allocates nothing
 * for them.
 */
function hashKey(key: string): void {
  hashLanes(0x811c9dc5, 0x9e3779b9, key);
  keyHash = hash52(lanes[0], lanes[1]);
  keySlot = lanes[0] >>> 0;
  keyShard = lanes[1] & (SHARDS - 1);
}

// The table runningIn found the window in.
let runningTable: Table;

/**
 * The offset of the running window of the key just hashed, in the current table or else the
 * previous one (runningTable says which), or -1 when it has none. A key has at most one.
 */
function runningIn(shard: Shard, now: number): number {
  runningTable = shard.current;
  const at = shard.current.live(keyHash, keySlot, now);
  if (at >= 0) return at;
  runningTable = shard.previous;
  return shard.previous.live(keyHash, keySlot, now);
}

export class HashedWindowStorage {
  private readonly shards: Shard[] = [];
  private readonly long = new Map<string, LongWindow>();
  private readonly generationMs: number;

  /**
   * `durationMs`: the limiter's window (a generation is that long; a limiter whose windows never
   * end gets one-minute generations for its blocks). `now`: the clock, for tests.
   */
  constructor(durationMs: number, private readonly now: () => number = Date.now) {
    this.generationMs = durationMs > 0 ? durationMs : 60_000;
    const start = now();
    // The shards' generations begin a 64th of a generation apart, so they are renewed one at a
    // time, not all at the same moment.
    for (let i = 0; i < SHARDS; i++) this.shards.push({ current: new Table(MIN_SLOTS), previous: new Table(MIN_SLOTS), generationStart: start - Math.floor((i * this.generationMs) / SHARDS) });
  }

  /** Adds `value` points to the key's window, opening a new window when it has none running. */
  incrby(key: string, value: number, durationSec: number): RateLimiterRes {
    const now = this.now();
    const long = this.long.size > 0 ? this.liveLong(key, now) : undefined;
    if (long) {
      long.value += value;
      return longAnswer(long, now);
    }
    hashKey(key);
    const shard = this.shardAt(now);
    const at = runningIn(shard, now);
    if (at >= 0) {
      const slots = runningTable.slots;
      slots[at + 2] += value;
      return new RateLimiterRes(0, slots[at + 1] - now, slots[at + 2], false);
    }
    return this.open(key, value, durationSec * 1000, now, shard);
  }

  /** Opens a new window of `durationSec` (0: never ends) holding `value` points. */
  set(key: string, value: number, durationSec: number): RateLimiterRes {
    const now = this.now();
    if (this.long.size > 0) this.long.delete(key);
    hashKey(key);
    const shard = this.shardAt(now);
    // The key's running window, if any, ends: a key has one window at a time.
    this.endInTables(shard, now);
    return this.open(key, value, durationSec * 1000, now, shard);
  }

  get(key: string): RateLimiterRes | null {
    const now = this.now();
    const long = this.long.size > 0 ? this.liveLong(key, now) : undefined;
    if (long) return longAnswer(long, now);
    hashKey(key);
    const at = runningIn(this.shardAt(now), now);
    return at >= 0 ? new RateLimiterRes(0, runningTable.slots[at + 1] - now, runningTable.slots[at + 2], false) : null;
  }

  /** Ends the key's window; true when it had one running. */
  delete(key: string): boolean {
    const now = this.now();
    const long = this.long.size > 0 && this.liveLong(key, now) !== undefined;
    if (long) this.long.delete(key);
    hashKey(key);
    return this.endInTables(this.shardAt(now), now) || long;
  }

  /** rate-limiter-flexible's dump() reads this: the keys are not kept, so it cannot be answered. */
  get _storage(): never {
    throw new Error('HashedWindowStorage keeps no keys: RateLimiterMemory.dump() is not supported');
  }

  /** rate-limiter-flexible's restore() calls this; see _storage. */
  _restoreRecord(): never {
    throw new Error('HashedWindowStorage keeps no keys: RateLimiterMemory.restore() is not supported');
  }

  /** Windows held, ended ones not yet dropped included (for tests and the store's benchmark). */
  get windows(): number {
    let n = this.long.size;
    for (const shard of this.shards) n += shard.current.size + shard.previous.size;
    return n;
  }

  private liveLong(key: string, now: number): LongWindow | undefined {
    const window = this.long.get(key);
    if (!window) return undefined;
    if (window.expiresAt === null || window.expiresAt > now) return window;
    this.long.delete(key);
    return undefined;
  }

  /** Opens the window of the key just hashed; no window of it is running. */
  private open(key: string, value: number, durationMs: number, now: number, shard: Shard): RateLimiterRes {
    if (durationMs <= 0 || durationMs > this.generationMs) {
      if (this.long.size >= 1024 && this.long.size % 1024 === 0) this.dropEndedLong(now);
      this.long.set(key, { value, expiresAt: durationMs > 0 ? now + durationMs : null });
      return new RateLimiterRes(0, durationMs > 0 ? durationMs : -1, value, true);
    }
    let table = shard.current;
    let at = table.find(keyHash, keySlot);
    if (table.slots[at] === 0) {
      if (table.size + 1 > table.capacity * MAX_LOAD) {
        table = shard.current = this.grown(table, now);
        at = table.find(keyHash, keySlot);
      }
      table.size += 1;
    }
    table.slots[at] = keyHash;
    table.slots[at + 1] = now + durationMs;
    table.slots[at + 2] = value;
    return new RateLimiterRes(0, durationMs, value, true);
  }

  /** Ends the running window of the key just hashed; true when there was one. */
  private endInTables(shard: Shard, now: number): boolean {
    const at = runningIn(shard, now);
    if (at < 0) return false;
    // A key has at most one window running (open() is reached only when it has none), so the
    // other table holds none to end.
    runningTable.slots[at + 1] = 0;
    return true;
  }

  /**
   * The shard of the key just hashed, its generations renewed if `now` is past its current one:
   * the older table's windows have all ended, so it is emptied and becomes the new current table.
   */
  private shardAt(now: number): Shard {
    const shard = this.shards[keyShard];
    const age = now - shard.generationStart;
    if (age < this.generationMs) return shard;
    if (age >= 2 * this.generationMs) {
      // Nothing running in either: both start over, sized for what the last generation held.
      shard.previous = new Table(MIN_SLOTS);
      shard.current = this.emptied(shard.current, capacityFor(shard.current.size));
      shard.generationStart = now;
      return shard;
    }
    const ended = shard.previous;
    shard.previous = shard.current;
    shard.current = this.emptied(ended, capacityFor(shard.previous.size));
    shard.generationStart += this.generationMs;
    return shard;
  }

  /** `table` cleared for reuse when it has the capacity wanted, else a new table of it. */
  private emptied(table: Table, capacity: number): Table {
    if (table.capacity !== capacity) return new Table(capacity);
    table.slots.fill(0);
    table.size = 0;
    return table;
  }

  /** `table`'s running windows in a table twice its size; ended ones are dropped. */
  private grown(table: Table, now: number): Table {
    const next = new Table(table.capacity * 2);
    const from = table.slots;
    const to = next.slots;
    for (let at = 0; at < from.length; at += STRIDE) {
      const hash = from[at];
      if (hash === 0 || from[at + 1] <= now) continue;
      // The slot to probe from is the low 32 bits of the hash's first lane: its top 32 of 52 bits.
      const dest = next.find(hash, Math.floor((hash - 1) / 0x100000));
      to[dest] = hash;
      to[dest + 1] = from[at + 1];
      to[dest + 2] = from[at + 2];
      next.size += 1;
    }
    return next;
  }

  private dropEndedLong(now: number): void {
    for (const [key, window] of this.long) if (window.expiresAt !== null && window.expiresAt <= now) this.long.delete(key);
  }
}

/**
 * Installs a HashedWindowStorage in a RateLimiterMemory. The library keeps its store in the field
 * `_memoryStorage`; if a later version renames it, this throws at start-up instead of leaving the
 * library's per-key records and timers in place unnoticed.
 */
export function withHashedStorage(limiter: RateLimiterMemory, storage?: HashedWindowStorage): RateLimiterMemory {
  const fields = limiter as unknown as { _memoryStorage?: unknown };
  if (typeof (fields._memoryStorage as { incrby?: unknown } | undefined)?.incrby !== 'function') {
    throw new Error('rate-limiter-flexible: RateLimiterMemory no longer keeps its store in _memoryStorage; see src/http/hashed-window-storage.ts');
  }
  fields._memoryStorage = storage ?? new HashedWindowStorage(limiter.duration * 1000);
  return limiter;
}
