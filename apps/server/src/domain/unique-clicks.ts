/**
 * Unique clicks (docs/analytics.md "Unique clicks"): a click counts as unique unless the same
 * visitor clicked the same link within the window before — the same visitor being the same click
 * id (a returning cookie), or the same address and user agent. Raw clicks are all recorded and
 * listed; only the `unique_clicks` counter depends on this.
 *
 * Kept in the memory of the server process, so the click lane does no extra database work per
 * click: the window is remembered per process (a visitor whose clicks reach two processes within
 * the window can count once in each), and a restart forgets it. The memory is bounded: past
 * MAX_VISITORS the oldest sightings are forgotten first, so an attack of distinct visitors costs
 * memory no more than that, and a forgotten visitor counts again.
 */
import { INPUT_RULES } from '@reftrack/contract';
import { hash52, hashLanes, lanes } from '../two-lane-hash.js';

const MAX_VISITORS = 200_000;
/** Slots of one generation's table: a power of two, at most 40% full (MAX_VISITORS / 2 sightings). */
const SLOTS = 1 << 18;

/** A visitor of a click: its click id (a returning cookie), or its address with its user agent. */
export type Visitor = { clickId: string } | { address: string; userAgent: string };

const SEED_CLICK: [number, number] = [0x811c9dc5, 0x9e3779b9];
const SEED_ADDRESS: [number, number] = [0x050c5d1f, 0x7f4a7c15];
// A user agent is the long part of an address visitor (~130 characters) and real traffic repeats a
// few hundred of them: its part of the hash is kept, and each click hashes only its address.
const AGENT_STATES_MAX = 2000;
const agentStates = new Map<string, [number, number]>();

function agentState(userAgent: string): [number, number] {
  // Cut to the length a stored user agent keeps: a header of kilobytes, repeated with variations,
  // must not make the cache hold megabytes per entry (2,000 entries of at most 1,024 characters).
  const agent = userAgent.slice(0, INPUT_RULES.storedText.user_agent);
  let state = agentStates.get(agent);
  if (!state) {
    if (agentStates.size >= AGENT_STATES_MAX) agentStates.clear();
    hashLanes(SEED_ADDRESS[0], SEED_ADDRESS[1], `${agent}\u0000`);
    agentStates.set(agent, (state = [lanes[0], lanes[1]]));
  }
  return state;
}

/**
 * A 52-bit hash of a link and a visitor, never 0 (the empty slot). Two different sightings share a
 * hash with a probability of about 2^-52 per pair; with 200,000 remembered that is one wrong
 * "repeat" in some 20 billion clicks.
 */
function sightingHash(linkId: number, visitor: Visitor): number {
  if ('clickId' in visitor) hashLanes(SEED_CLICK[0], SEED_CLICK[1], visitor.clickId);
  else {
    const [agentA, agentB] = agentState(visitor.userAgent);
    hashLanes(agentA, agentB, visitor.address);
  }
  const a = Math.imul(lanes[0] ^ linkId, 0x01000193);
  let b = Math.imul(lanes[1] ^ linkId, 0x85ebca6b);
  b ^= b >>> 13;
  return hash52(a, b);
}

/**
 * One generation of sightings: an open-addressing table of hash → time in two typed arrays. No
 * per-sighting object or string is kept, so the whole window is 8 MiB that the garbage collector
 * never walks (a Map of string keys held ~30 MB of long-lived strings that every major collection
 * had to mark, and the click lane paid for it).
 */
class Sightings {
  readonly keys = new Float64Array(SLOTS);
  readonly times = new Float64Array(SLOTS);
  size = 0;

  private slot(hash: number): number {
    let i = hash % SLOTS;
    while (this.keys[i] !== 0 && this.keys[i] !== hash) i = (i + 1) & (SLOTS - 1);
    return i;
  }

  get(hash: number): number | undefined {
    const i = this.slot(hash);
    return this.keys[i] === hash ? this.times[i] : undefined;
  }

  set(hash: number, at: number): void {
    const i = this.slot(hash);
    if (this.keys[i] === 0) {
      this.keys[i] = hash;
      this.size++;
    }
    this.times[i] = at;
  }

  clear(): void {
    this.keys.fill(0);
    this.size = 0;
  }
}

export class UniqueClickWindow {
  // Two generations of sightings. New sightings go to `current`; when it holds half the bound, it
  // becomes `previous` and the old `previous`, emptied, becomes `current` — the oldest sightings
  // are forgotten first, a generation at a time. (Evicting one oldest key per click from a single
  // Map — delete, then keys().next() — walks the deleted slots at the front of V8's hash table on
  // every call: measured, it cut the click rate to a third within a minute of a busy bench run.)
  private current = new Sightings();
  private previous = new Sightings();
  private hashes = new Float64Array(2);

  constructor(private readonly windowMs: number) {}

  /**
   * True when this click counts as unique, and then remembers it; `visitors` are the click's
   * visitors (its click id, its address with its user agent): a sighting of any of them on the
   * link within the window makes it a repeat.
   */
  countOnce(linkId: number, visitors: readonly Visitor[], at: number): boolean {
    if (this.windowMs <= 0) return true;
    // The hashes go into a scratch array kept between calls: the click lane calls this per click.
    if (this.hashes.length < visitors.length) this.hashes = new Float64Array(visitors.length);
    const hashes = this.hashes;
    for (let i = 0; i < visitors.length; i++) {
      const hash = (hashes[i] = sightingHash(linkId, visitors[i]));
      const last = this.current.get(hash) ?? this.previous.get(hash);
      if (last !== undefined && at - last < this.windowMs && at >= last) return false;
    }
    for (let i = 0; i < visitors.length; i++) this.current.set(hashes[i], at);
    if (this.current.size >= MAX_VISITORS / 2) {
      const emptied = this.previous;
      emptied.clear();
      this.previous = this.current;
      this.current = emptied;
    }
    return true;
  }
}
