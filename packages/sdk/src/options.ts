/**
 * Checks of what callers pass in. A typo in an option or field name fails at once with a message
 * naming it, instead of being dropped on the way to the server.
 */
import type { Dispatcher } from 'undici';
import { RETRY_DEFAULTS } from './retry-policy.js';
import type { WarningHandler } from './warnings.js';

export const DEFAULT_BASE_URL = 'http://localhost:8787';
export const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_TIMEOUT_MS = 10 * 60_000;
const MAX_RETRIES_LIMIT = 10;

export interface ReftrackOptions {
  /** Program API key (`aff_...`). Default: `REFTRACK_API_KEY`. Keep it server-side. */
  apiKey?: string;
  /** Service address. Default: `REFTRACK_BASE_URL`, else `http://localhost:8787`. */
  baseUrl?: string;
  /** Deadline of one attempt, in milliseconds. Default 10000. */
  timeoutMs?: number;
  /** Retries after the first attempt, where a retry is safe. Default 2. */
  maxRetries?: number;
  /** Receives key-rotation notices. Default: one console warning per process. */
  onWarning?: WarningHandler;
  /** undici dispatcher (an Agent, a ProxyAgent, a MockAgent). Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
}

export interface RequestOptions {
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number;
  /** Overrides the client's `maxRetries` for this call. */
  maxRetries?: number;
}

/** Throws a TypeError naming the first key of `value` that is not in `allowed`. */
export function assertKnownKeys(what: string, value: object, allowed: readonly string[], noun = 'field'): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${what}: unknown ${noun} "${key}". Known ${noun}s: ${allowed.join(', ')}.`);
    }
  }
}

export function assertPlainObject(what: string, value: unknown): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`${what} must be an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}.`);
  }
}

export function checkTimeoutMs(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    throw new TypeError(`${what} must be an integer number of milliseconds between 1 and ${MAX_TIMEOUT_MS}, got ${String(value)}.`);
  }
  return value;
}

export function checkMaxRetries(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_RETRIES_LIMIT) {
    throw new TypeError(`${what} must be an integer between 0 and ${MAX_RETRIES_LIMIT}, got ${String(value)}.`);
  }
  return value;
}

export function checkBaseUrl(what: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new TypeError(`${what} must be a non-empty URL string.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${what} is not a valid URL: "${value}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${what} must use http or https, got "${url.protocol}".`);
  if (url.search || url.hash) throw new TypeError(`${what} must not have a query or fragment: "${value}".`);
  return url.href.replace(/\/+$/, '');
}

export function checkApiKey(what: string, value: unknown): string {
  // Keys issued before the `aff_` prefix existed still authenticate (5.1), so the prefix is not required.
  if (typeof value !== 'string' || value.trim() === '' || /\s/.test(value)) {
    throw new TypeError(`${what} must be a non-empty string without spaces.`);
  }
  return value;
}

export interface ResolvedOptions {
  apiKey: string | null;
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  onWarning: WarningHandler | null;
  dispatcher: Dispatcher | undefined;
}

const CLIENT_OPTION_KEYS = ['apiKey', 'baseUrl', 'timeoutMs', 'maxRetries', 'onWarning', 'dispatcher'] as const;

export function resolveClientOptions(options: unknown, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  assertPlainObject('Reftrack options', options);
  assertKnownKeys('Reftrack options', options, CLIENT_OPTION_KEYS, 'option');
  const o = options as ReftrackOptions;

  let apiKey: string | null = null;
  if (o.apiKey !== undefined) apiKey = checkApiKey('apiKey', o.apiKey);
  else if (env.REFTRACK_API_KEY !== undefined && env.REFTRACK_API_KEY !== '') apiKey = checkApiKey('REFTRACK_API_KEY', env.REFTRACK_API_KEY);

  let baseUrl = DEFAULT_BASE_URL;
  if (o.baseUrl !== undefined) baseUrl = checkBaseUrl('baseUrl', o.baseUrl);
  else if (env.REFTRACK_BASE_URL !== undefined && env.REFTRACK_BASE_URL !== '') baseUrl = checkBaseUrl('REFTRACK_BASE_URL', env.REFTRACK_BASE_URL);

  if (o.onWarning !== undefined && typeof o.onWarning !== 'function') {
    throw new TypeError(`onWarning must be a function, got ${typeof o.onWarning}.`);
  }
  if (o.dispatcher !== undefined && (typeof o.dispatcher !== 'object' || o.dispatcher === null || typeof o.dispatcher.dispatch !== 'function')) {
    throw new TypeError('dispatcher must be an undici Dispatcher (an object with a dispatch method).');
  }

  return {
    apiKey,
    baseUrl,
    timeoutMs: o.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : checkTimeoutMs('timeoutMs', o.timeoutMs),
    maxRetries: o.maxRetries === undefined ? RETRY_DEFAULTS.maxRetries : checkMaxRetries('maxRetries', o.maxRetries),
    onWarning: o.onWarning ?? null,
    dispatcher: o.dispatcher,
  };
}

/** Per-call overrides, checked like the client's own options. */
export function resolveRequestOptions(
  what: string,
  options: unknown,
  defaults: { timeoutMs: number; maxRetries: number },
  extraKeys: readonly string[] = [],
): { timeoutMs: number; maxRetries: number } {
  if (options === undefined) return defaults;
  assertPlainObject(what, options);
  assertKnownKeys(what, options, ['timeoutMs', 'maxRetries', ...extraKeys], 'option');
  return {
    timeoutMs: options.timeoutMs === undefined ? defaults.timeoutMs : checkTimeoutMs(`${what}.timeoutMs`, options.timeoutMs),
    maxRetries: options.maxRetries === undefined ? defaults.maxRetries : checkMaxRetries(`${what}.maxRetries`, options.maxRetries),
  };
}
