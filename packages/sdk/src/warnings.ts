/**
 * Rotation notices (spec 5.5): a `warnings` array beside `data`, and `Deprecation`, `Sunset` and
 * `Link` headers on every response of a key marked for rotation (still present once it is retired).
 * They reach the integrator through `onWarning` so the deadline is seen before calls start failing.
 */
import { BRAND, ERROR_CODES, ERRORS, HEADERS, docsUrl as docsUrlFor, formatMessage } from '@reftrack/contract';
import type { RotationWarning } from '@reftrack/contract';

export interface ReftrackWarning {
  code: RotationWarning['code'];
  message: string;
  hint: string | null;
  /** ISO 8601 deadline, from the body's `rotate_by` or the `Sunset` header. */
  rotateBy: string | null;
  docsUrl: string | null;
  /** Raw `Deprecation` header (`@<unix seconds>` of the marking). */
  deprecation: string | null;
  /** Raw `Sunset` header (HTTP-date of the deadline). */
  sunset: string | null;
  /** Raw `Link` header. */
  link: string | null;
  requestId: string | null;
  /** The body's warnings item as sent, when there was one. */
  raw: RotationWarning | null;
}

export type WarningHandler = (warning: ReftrackWarning) => void;

function headerDeadline(sunset: string | null): string | null {
  if (sunset === null) return null;
  const at = Date.parse(sunset);
  return Number.isNaN(at) ? null : new Date(at).toISOString();
}

function linkTarget(link: string | null): string | null {
  const match = link ? /<([^>]+)>/.exec(link) : null;
  return match ? match[1] : null;
}

/**
 * One warning per body item; when the body has none (a retired key's 401, a non-JSON body) but
 * the headers are there, one warning made from the headers.
 */
export function collectWarnings(input: {
  bodyWarnings: RotationWarning[];
  headers: Record<string, string>;
  baseUrl: string;
  errorMessage?: string | null;
}): ReftrackWarning[] {
  const { headers } = input;
  const deprecation = headers[HEADERS.deprecation.toLowerCase()] ?? null;
  const sunset = headers[HEADERS.sunset.toLowerCase()] ?? null;
  const link = headers[HEADERS.link.toLowerCase()] ?? null;
  const requestId = headers[HEADERS.requestId.toLowerCase()] ?? null;
  const common = { deprecation, sunset, link, requestId };

  if (input.bodyWarnings.length > 0) {
    return input.bodyWarnings.map((w) => ({
      ...common,
      code: w.code,
      message: w.message,
      hint: w.hint ?? null,
      rotateBy: w.rotate_by ?? headerDeadline(sunset),
      docsUrl: w.docs_url ?? linkTarget(link),
      raw: w,
    }));
  }
  if (deprecation === null && sunset === null) return [];

  const rotateBy = headerDeadline(sunset);
  return [
    {
      ...common,
      code: ERROR_CODES.apiKeyRotationRequired,
      message: input.errorMessage ?? formatMessage(ERRORS.keyRotationWarning.message, { deadline: rotateBy ?? sunset ?? 'an unknown time' }),
      hint: (input.errorMessage ? ERRORS.keyRotationRequired.hint : ERRORS.keyRotationWarning.hint) ?? null,
      rotateBy,
      docsUrl: linkTarget(link) ?? docsUrlFor(input.baseUrl, ERROR_CODES.apiKeyRotationRequired),
      raw: null,
    },
  ];
}

/** Global so that the ESM and CJS copies of the SDK loaded in one process still warn only once. */
const WARNED = Symbol.for('@reftrack/sdk.rotation-warning-shown');

/** The default `onWarning`: one console warning per process, so logs are not flooded on every call. */
export const warnOncePerProcess: WarningHandler = (warning) => {
  const registry = globalThis as unknown as Record<symbol, boolean | undefined>;
  if (registry[WARNED]) return;
  registry[WARNED] = true;
  const parts = [`${BRAND.debugPrefix} ${warning.message}`];
  if (warning.hint) parts.push(warning.hint);
  if (warning.rotateBy) parts.push(`Rotate by ${warning.rotateBy}.`);
  if (warning.docsUrl) parts.push(`See ${warning.docsUrl}`);
  console.warn(parts.join(' '));
};

/** Test hook: lets the default handler print again. */
export function resetWarnOncePerProcess(): void {
  delete (globalThis as unknown as Record<symbol, boolean | undefined>)[WARNED];
}
