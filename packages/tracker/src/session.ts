import { BRAND } from '@reftrack/contract';

/**
 * A per-tab session id kept in sessionStorage. Answers undefined when storage is blocked
 * (sandboxed frames, strict privacy modes): the field is optional for the server.
 */
export function sessionId(store?: Record<string, string>): string | undefined {
  const key = BRAND.token + '_sid';
  try {
    // Touching `sessionStorage` itself may throw, hence inside the try. Property access on
    // Storage reads and writes items, in fewer bytes than getItem/setItem.
    const s = store || sessionStorage;
    return (s[key] ||= Math.random().toString(36).slice(2));
  } catch {
    return undefined;
  }
}
