/**
 * Wakes this process's delivery workers when deliveries were queued here (by the outbox consumer,
 * a resend or a test event), so a delivery starts within milliseconds instead of at the next poll.
 * Workers of other processes find them at their poll.
 */
const listeners = new Set<() => void>();

export function onDeliveriesQueued(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function deliveriesQueued(): void {
  for (const listener of listeners) listener();
}
