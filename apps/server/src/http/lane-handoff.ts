/**
 * What the click route's fast lane (routes/track/click-lane.ts) already did for a request it
 * hands to Koa: the rate-limit point it spent, the body it read, and the error it met. Koa's
 * route entry takes these instead of doing the work again, so a handed-off request spends one
 * point, and is answered exactly as if Koa had handled it from the start.
 */
import type { IncomingMessage } from 'node:http';
import type { RateOutcome } from './rate-limit.js';

export interface Handoff {
  /** The rate-limit point it spent; none when it failed before spending one. */
  rate?: RateOutcome;
  /** The whole body, when the lane read it. */
  raw?: Buffer;
  /** Thrown where the route's handler would have thrown it (the handler does not run). */
  failure?: { error: unknown };
}

const handoffs = new WeakMap<IncomingMessage, Handoff>();

export function handOff(req: IncomingMessage, handoff: Handoff): void {
  handoffs.set(req, handoff);
}

export function handoffOf(req: IncomingMessage): Handoff | undefined {
  return handoffs.get(req);
}
