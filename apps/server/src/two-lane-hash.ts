/**
 * The in-memory tables of hashed keys (the unique-click window, domain/unique-clicks.ts; the memory
 * rate limiter's windows, http/hashed-window-storage.ts) hash a string as two 32-bit FNV-1a
 * variants over its UTF-16 units and keep the pair as one 52-bit number, which a Float64Array
 * holds exactly. Both run on every click, so a hash allocates nothing: its lanes are left in
 * `lanes`, to be read before the next call.
 */

/** The two lanes the last hashLanes call left (int32). */
export const lanes = new Int32Array(2);

/** Hashes `text` continuing from lanes `a` and `b` (a seed, or an earlier text's lanes); the result is in `lanes`. */
export function hashLanes(a: number, b: number, text: string): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0xc2b2ae35);
    b ^= b >>> 15;
  }
  lanes[0] = a;
  lanes[1] = b;
}

/** The 52-bit hash of two lanes: all of `a`, the top 20 bits of `b`; never 0, the empty slot of the tables. */
export function hash52(a: number, b: number): number {
  return (a >>> 0) * 0x100000 + (b >>> 12) + 1;
}
