/** Wakes this process's mail worker when the outbox consumer made messages ready (mail/worker.ts). */
const listeners = new Set<() => void>();

export function onMailReady(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function mailReady(): void {
  for (const listener of listeners) listener();
}
