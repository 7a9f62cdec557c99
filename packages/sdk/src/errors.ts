/**
 * One error class for everything the SDK throws about a call, with subclasses chosen from the HTTP
 * status so callers can `catch` by kind. Every field a support ticket needs (status, code, request
 * id, docs link) sits on the error itself.
 */
import { ERROR_CODES, HEADERS, docsUrl as docsUrlFor } from '@reftrack/contract';
import type { RotationWarning } from '@reftrack/contract';

export interface ReftrackErrorInit {
  status: number | null;
  code: string | null;
  message: string;
  requestId?: string | null;
  docsUrl?: string | null;
  details?: Record<string, unknown>;
  hint?: string | null;
  retryAfterSeconds?: number | null;
  headers?: Record<string, string>;
  raw?: unknown;
  warnings?: RotationWarning[];
  cause?: unknown;
}

export class ReftrackError extends Error {
  override readonly name: string = 'ReftrackError';
  /** HTTP status; null when no response arrived (ConnectionError). */
  readonly status: number | null;
  /** `error.code` of the body; null for platform errors that carry none (match on status and message then). */
  readonly code: string | null;
  /** `X-Request-ID` of the response; quote it when asking for support. */
  readonly requestId: string | null;
  /** `docs_url` of the body, else the error reference page anchored at `code`. */
  readonly docsUrl: string | null;
  /** `error.details` of a platform body, or the extra fields of a typed body. */
  readonly details: Record<string, unknown>;
  readonly hint: string | null;
  /** Seconds the server asked to wait (Retry-After or `retry_after_seconds`), when it said. */
  readonly retryAfterSeconds: number | null;
  readonly headers: Record<string, string>;
  /** The parsed response body (or its text when it was not JSON). */
  readonly raw: unknown;
  /** Rotation warnings that came with this response, if any. */
  readonly warnings: RotationWarning[];
  /** How many requests were sent before giving up (1 = no retry). Set by the request sender. */
  attempts = 1;

  constructor(init: ReftrackErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId ?? null;
    this.docsUrl = init.docsUrl ?? null;
    this.details = init.details ?? {};
    this.hint = init.hint ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.headers = init.headers ?? {};
    this.raw = init.raw;
    this.warnings = init.warnings ?? [];
  }
}

/** 400, 413, 422 and other 4xx without a class of their own: fix the request before sending it again. */
export class InvalidRequestError extends ReftrackError {
  override readonly name: string = 'InvalidRequestError';
}

/** 401: no usable credential. Not retried until the key changes. */
export class AuthenticationError extends ReftrackError {
  override readonly name: string = 'AuthenticationError';
}

/** 401 `api_key_rotation_required`: the key passed its rotation deadline; a workspace owner must regenerate it. */
export class KeyRotationRequiredError extends AuthenticationError {
  override readonly name: string = 'KeyRotationRequiredError';
  /** The `Sunset` header (HTTP-date of the deadline), when sent. */
  get sunset(): string | null {
    return this.headers[HEADERS.sunset.toLowerCase()] ?? null;
  }
}

/** 403: valid credential, wrong resource. */
export class PermissionError extends ReftrackError {
  override readonly name: string = 'PermissionError';
}

/** 404: the target (for example the sale to refund) does not exist. */
export class NotFoundError extends ReftrackError {
  override readonly name: string = 'NotFoundError';
}

/** 409 on calls where it is not a duplicate sale (a duplicate sale is a success result instead). */
export class ConflictError extends ReftrackError {
  override readonly name: string = 'ConflictError';
}

/** 410: a retired endpoint, or a disabled referral link (`link_disabled`). */
export class GoneError extends ReftrackError {
  override readonly name: string = 'GoneError';
}

/** 429: wait `retryAfterSeconds`, then retry (the SDK already did, up to `maxRetries`). */
export class RateLimitError extends ReftrackError {
  override readonly name: string = 'RateLimitError';
}

/** 5xx, or a response the SDK could not read. */
export class APIError extends ReftrackError {
  override readonly name: string = 'APIError';
}

/** No response: the connection failed or the request timed out. The request may or may not have been processed. */
export class ConnectionError extends ReftrackError {
  override readonly name: string = 'ConnectionError';
  readonly timedOut: boolean;
  constructor(init: Omit<ReftrackErrorInit, 'status' | 'code'> & { timedOut: boolean }) {
    super({ ...init, status: null, code: null });
    this.timedOut = init.timedOut;
  }
}

type ErrorClass = new (init: ReftrackErrorInit) => ReftrackError;

function classFor(status: number, code: string | null): ErrorClass {
  if (status === 401) return code === ERROR_CODES.apiKeyRotationRequired ? KeyRotationRequiredError : AuthenticationError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 410) return GoneError;
  if (status === 429) return RateLimitError;
  if (status >= 400 && status < 500) return InvalidRequestError;
  return APIError;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Seconds from a `Retry-After` header: delta-seconds or an HTTP-date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/** Rotation warnings of a body (5.5), keeping only well-formed items. */
export function readBodyWarnings(body: unknown): RotationWarning[] {
  if (!isRecord(body) || !Array.isArray(body.warnings)) return [];
  return body.warnings.filter((w): w is RotationWarning => isRecord(w) && typeof w.code === 'string' && typeof w.message === 'string');
}

/**
 * The message of an answer without either envelope. Every Reftrack answer carries one, so below
 * 500 such an answer means baseUrl names another server (a website's 404 page, a dev server):
 * say that, with the address, rather than an HTTP status the person cannot act on. A 5xx without
 * one usually comes from a proxy in front of a Reftrack server that is down.
 */
function withoutEnvelope(status: number, headers: Record<string, string>, baseUrl: string): string {
  const type = headers['content-type']?.split(';')[0]?.trim() || 'no content type';
  if (status >= 500) return `Unexpected response from the Reftrack API (HTTP ${status}, ${type}, without Reftrack's error envelope: a proxy in front of ${baseUrl} may have answered)`;
  return `${baseUrl} does not look like a Reftrack server: it answered HTTP ${status} (${type}) without Reftrack's error envelope. Check baseUrl or REFTRACK_BASE_URL.`;
}

export interface ErrorResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  baseUrl: string;
}

/**
 * Builds the error for a non-2xx response. Reads both envelopes of spec 7.1: platform
 * `{data: null, error: {status, name, message, details, code?}}` and typed `{error: {code, message, ...}}`.
 */
export function errorFromResponse({ status, body, headers, baseUrl }: ErrorResponse): ReftrackError {
  const requestId = headers[HEADERS.requestId.toLowerCase()] ?? null;
  const envelope = isRecord(body) && isRecord(body.error) ? body.error : null;
  const code = typeof envelope?.code === 'string' ? envelope.code : null;
  const message = typeof envelope?.message === 'string' ? envelope.message : withoutEnvelope(status, headers, baseUrl);

  // The platform envelope carries `details`; the typed one puts its extras (hint, docs_url,
  // retry_after_seconds, ...) beside code and message, so those become the details.
  let details: Record<string, unknown> = {};
  if (envelope && isRecord(body) && 'data' in body) {
    details = isRecord(envelope.details) ? envelope.details : {};
  } else if (envelope) {
    const { code: _code, message: _message, status: _status, ...extras } = envelope;
    details = extras;
  }

  const bodyDocsUrl = typeof envelope?.docs_url === 'string' ? envelope.docs_url : null;
  const bodyRetryAfter = typeof envelope?.retry_after_seconds === 'number' ? envelope.retry_after_seconds : null;
  const ErrorKind = classFor(status, code);
  return new ErrorKind({
    status,
    code,
    message,
    requestId,
    docsUrl: bodyDocsUrl ?? docsUrlFor(baseUrl, code ?? undefined),
    details,
    hint: typeof envelope?.hint === 'string' ? envelope.hint : null,
    retryAfterSeconds: parseRetryAfter(headers[HEADERS.retryAfter.toLowerCase()]) ?? bodyRetryAfter,
    headers,
    raw: body,
    warnings: readBodyWarnings(body),
  });
}
