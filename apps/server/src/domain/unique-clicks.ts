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
const MAX_VISITORS = 200_000;

export class UniqueClickWindow {
  /** Key (link and visitor) → when that visitor's counted click on the link was. Oldest first. */
  private readonly seen = new Map<string, number>();

  constructor(private readonly windowMs: number) {}

  /**
   * True when this click counts as unique, and then remembers it; `visitors` are the click's
   * visitor keys (its click id, its address and user agent): a sighting under any of them within
   * the window makes it a repeat.
   */
  countOnce(linkId: number, visitors: readonly string[], at: number): boolean {
    if (this.windowMs <= 0) return true;
    for (const visitor of visitors) {
      const last = this.seen.get(`${linkId}\u0000${visitor}`);
      if (last !== undefined && at - last < this.windowMs && at >= last) return false;
    }
    for (const visitor of visitors) {
      const key = `${linkId}\u0000${visitor}`;
      // Re-inserted so the map stays in order of last counting: the first key is the oldest.
      this.seen.delete(key);
      this.seen.set(key, at);
    }
    while (this.seen.size > MAX_VISITORS) this.seen.delete(this.seen.keys().next().value as string);
    return true;
  }
}
