/**
 * Small readers that turn untrusted JSON members into typed values: used by the HTTP routes on
 * request bodies and by the domain on payloads that arrive otherwise (processor events).
 */

export type Body = Record<string, unknown>;

/** A non-empty string (trimmed) or undefined; other types count as absent. */
export function str(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  return s ? s : undefined;
}

/** An optional free-text field, cut to `max` characters; wrong types are dropped, not refused. */
export function text(value: unknown, max: number): string | null {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, max) : null;
}

export function obj(value: unknown): Body | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : undefined;
}

export interface TestMode {
  testMode: boolean;
  programId?: number;
}

export function testModeOf(body: Body): TestMode {
  const extra = obj(body.additional_data);
  if (!extra || extra.test_mode !== true) return { testMode: false };
  const pid = extra.program_id;
  const programId = typeof pid === 'number' && Number.isSafeInteger(pid) ? pid : typeof pid === 'string' && /^\d{1,15}$/.test(pid) ? Number(pid) : undefined;
  return { testMode: true, programId };
}
