/**
 * Keeps one of Node's own `process.nextTick` objects alive for the life of the process, so that
 * V8 never forgets their shape (docs/performance.md, "The slow `process.nextTick`, found").
 *
 * Why: Node 20 builds each tick as a literal with computed keys,
 * `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`. V8 remembers, for each
 * key the literal defines, the hidden class (map) the object had before it, and holds those maps
 * weakly. A tick lives for microseconds, so a few major collections that fall while no tick is
 * alive free the maps; the next tick builds new ones, and V8 marks the literal's last three key
 * sites megamorphic, for good: from then on every `nextTick` (about eight per click, from the
 * request's and the answer's streams) calls into the runtime for each key, 200–450 ns instead of
 * 30–70. Whether a process fell into it was chance, likelier when it did a little work between
 * collections while otherwise idle (a health check, start-up); a click bench run that fell into it
 * spent 13–31% more of the event loop per click. One genuine tick object kept alive keeps the maps alive,
 * and the sites stay monomorphic (test/tick-shape.test.ts shows both).
 *
 * The tick object is only ever handed out to async hooks' `init`, so a hook is enabled for the
 * one `nextTick` below and disabled before it runs; no hook stays installed, so the cost of
 * async hooks is not paid afterwards.
 *
 * What it cannot prevent: once async ids pass V8's small-integer range (2^31 of them, hours of
 * full load), the ids' field may change representation, and V8 may then build new maps once more.
 */
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

const noop = (): void => {};

/** Idempotent: the first call keeps a tick object, later calls (a second server in one process) do nothing. */
export function keepTickObjectShape(): void {
  if (kept !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
}

/** Whether a tick object is kept (for the test). */
export function tickObjectKept(): boolean {
  return kept !== undefined;
}
