/**
 * The program key that authenticated a request (5.1–5.5), as program-key.ts finds it and as
 * handlers and middleware read it from ctx.state (http/state.ts).
 */
export interface KeyContext {
  keyId: number;
  programId: number;
  rotationMarkedAt: number | null;
  rotationDeadline: number | null;
}
