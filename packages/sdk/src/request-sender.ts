/**
 * Sends one API call through undici: JSON in and out, a per-attempt timeout, the retry loop of
 * retry-policy.ts, and rotation warnings handed to `onWarning`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request, type Dispatcher } from 'undici';
import { BRAND, HEADERS } from '@reftrack/contract';
import { ConnectionError, KeyRotationRequiredError, ReftrackError, errorFromResponse, readBodyWarnings } from './errors.js';
import { decideRetry } from './retry-policy.js';
import { collectWarnings, type WarningHandler } from './warnings.js';
import { SDK_VERSION } from './version.js';
import type { RotationWarning } from '@reftrack/contract';

export interface SenderConfig {
  baseUrl: string;
  apiKey: string | null;
  dispatcher: Dispatcher | undefined;
  onWarning: WarningHandler;
}

export interface SendOptions {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Whether to send the program key. The click call is public and must not carry it. */
  authenticated: boolean;
  timeoutMs: number;
  maxRetries: number;
}

export interface ApiResponse<T> {
  status: number;
  body: T;
  headers: Record<string, string>;
  requestId: string | null;
  warnings: RotationWarning[];
  attempts: number;
}

const USER_AGENT = `${BRAND.token}-sdk-node/${SDK_VERSION} node/${process.version}`;

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export class RequestSender {
  readonly #config: SenderConfig;

  constructor(config: SenderConfig) {
    this.#config = config;
  }

  async send<T>(options: SendOptions): Promise<ApiResponse<T>> {
    for (let retries = 0; ; retries += 1) {
      try {
        const response = await this.#attempt<T>(options);
        response.attempts = retries + 1;
        return response;
      } catch (error) {
        if (!(error instanceof ReftrackError)) throw error;
        error.attempts = retries + 1;
        const decision = decideRetry(error, retries, options.maxRetries);
        if (!decision.retry) throw error;
        await sleep(decision.delayMs);
      }
    }
  }

  async #attempt<T>(options: SendOptions): Promise<ApiResponse<T>> {
    const { baseUrl, apiKey, dispatcher } = this.#config;
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': USER_AGENT };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.authenticated && apiKey !== null) headers.authorization = `Bearer ${apiKey}`;

    // One deadline for the whole exchange, headers and body alike.
    const signal = AbortSignal.timeout(options.timeoutMs);
    let status: number;
    let rawHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const res = await request(`${baseUrl}${options.path}`, {
        method: options.method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        dispatcher,
        signal,
      });
      status = res.statusCode;
      rawHeaders = res.headers;
      text = await res.body.text();
    } catch (cause) {
      const timedOut = signal.aborted;
      throw new ConnectionError({
        message: timedOut
          ? `Request to ${options.method} ${options.path} timed out after ${options.timeoutMs} ms`
          : `Could not reach the Reftrack API at ${baseUrl} (${cause instanceof Error ? cause.message : String(cause)})`,
        timedOut,
        cause,
      });
    }

    const responseHeaders = flattenHeaders(rawHeaders);
    const parsed = parseJson(text);
    const body = parsed.ok ? parsed.value : text;
    const ok = status >= 200 && status < 300;
    const error = ok && parsed.ok ? null : errorFromResponse({ status, body, headers: responseHeaders, baseUrl });
    this.#emitWarnings(body, responseHeaders, error);
    if (error) throw error;

    return {
      status,
      body: body as T,
      headers: responseHeaders,
      requestId: responseHeaders[HEADERS.requestId.toLowerCase()] ?? null,
      warnings: readBodyWarnings(body),
      attempts: 1,
    };
  }

  #emitWarnings(body: unknown, headers: Record<string, string>, error: ReftrackError | null): void {
    const warnings = collectWarnings({
      bodyWarnings: readBodyWarnings(body),
      headers,
      baseUrl: this.#config.baseUrl,
      errorMessage: error instanceof KeyRotationRequiredError ? error.message : null,
    });
    for (const warning of warnings) {
      // A logging hook that throws must not turn a recorded sale into a failed call.
      try {
        this.#config.onWarning(warning);
      } catch (hookError) {
        console.error(`${BRAND.debugPrefix} onWarning threw`, hookError);
      }
    }
  }
}
