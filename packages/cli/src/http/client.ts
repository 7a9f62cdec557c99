/**
 * The one place that talks HTTP. Node's global fetch keeps startup small (undici is loaded by Node
 * only on the first request); every request has its own deadline through AbortSignal.timeout.
 */
import { ERRORS, formatMessage, HEADERS, ROUTES, type RotationWarning } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../cli-error.js';
import { EXIT } from '../exit-codes.js';
import { USER_AGENT } from '../version.js';
import { errorFromResponse, type CliRouteName } from './errors.js';

export const DEFAULT_TIMEOUT_MS = 15_000;

export type Warning = Pick<RotationWarning, 'code' | 'message'> & Partial<Pick<RotationWarning, 'hint' | 'rotate_by' | 'docs_url'>>;

export interface CallOptions {
  /** Bearer credential: the login token or the program key, depending on the route. */
  token?: string | null;
  body?: unknown;
  query?: Record<string, string>;
  /** Values of the route's `:name` segments. */
  params?: Record<string, string | number>;
  timeoutMs?: number;
}

export interface CallResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  warnings: Warning[];
}

export interface ClientOptions {
  baseUrl: string;
  /** Receives rotation warnings of every response, errors included (they still matter there). */
  onWarnings?: (warnings: Warning[]) => void;
}

export interface Client {
  readonly baseUrl: string;
  call(route: CliRouteName, options?: CallOptions): Promise<CallResult>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The body's `warnings` array (5.5), or one warning built from `Deprecation`/`Sunset` when a proxy dropped the body's. */
export function readWarnings(body: unknown, headers: Headers, ok: boolean): Warning[] {
  const out: Warning[] = [];
  if (isRecord(body) && Array.isArray(body.warnings)) {
    for (const item of body.warnings) {
      if (!isRecord(item) || typeof item.message !== 'string') continue;
      out.push({
        code: 'api_key_rotation_required',
        message: item.message,
        hint: typeof item.hint === 'string' ? item.hint : undefined,
        rotate_by: typeof item.rotate_by === 'string' ? item.rotate_by : undefined,
        docs_url: typeof item.docs_url === 'string' ? item.docs_url : undefined,
      });
    }
  }
  const sunset = headers.get(HEADERS.sunset);
  if (out.length === 0 && ok && headers.get(HEADERS.deprecation) !== null && sunset !== null) {
    const at = Date.parse(sunset);
    const deadline = Number.isNaN(at) ? sunset : new Date(at).toISOString();
    out.push({ code: 'api_key_rotation_required', message: formatMessage(ERRORS.keyRotationWarning.message, { deadline }), hint: ERRORS.keyRotationWarning.hint, rotate_by: deadline });
  }
  return out;
}

/** Both envelopes of spec 7.1 carry `error.message`; every Reftrack answer below 500 has one. */
function hasEnvelope(body: unknown): boolean {
  return isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string';
}

/**
 * An answer that no Reftrack server gives: an error below 500 without either envelope (a web
 * page's 404, a dev server's 405), or a success that is not a JSON object. --base-url most likely
 * names another server; say that, with the address, instead of a bare HTTP status. 5xx answers are
 * left to the usual path: a proxy in front of a Reftrack server that is down sends those.
 */
export function notReftrackServer(baseUrl: string, route: CliRouteName, status: number, headers: Headers): CliError {
  const spec = ROUTES[route];
  const type = headers.get('content-type')?.split(';')[0]?.trim() || 'no content type';
  return new CliError({
    code: CLI_CODES.notReftrackServer,
    message: `${baseUrl} does not look like a Reftrack server: ${spec.method} ${spec.path} answered HTTP ${status} (${type}) without Reftrack's JSON envelope.`,
    exitCode: EXIT.failure,
    status,
    hint: `Check --base-url or REFTRACK_BASE_URL: it must be the address of your Reftrack server (the one that serves /healthz and the dashboard), e.g. http://localhost:8787.`,
  });
}

function describeFailure(err: unknown): string {
  const cause = isRecord(err) && 'cause' in err ? (err as { cause?: unknown }).cause : undefined;
  if (isRecord(cause) && typeof cause.code === 'string') return cause.code;
  if (cause instanceof Error) return cause.message;
  return err instanceof Error ? err.message : String(err);
}

export function createClient(options: ClientOptions): Client {
  const baseUrl = options.baseUrl;
  return {
    baseUrl,
    async call(route, opts = {}) {
      const spec = ROUTES[route];
      const path = spec.path.replace(/:(\w+)/g, (_m, name: string) => {
        const value = opts.params?.[name];
        if (value === undefined) throw new Error(`${route}: no value for :${name}`);
        return encodeURIComponent(String(value));
      });
      const url = new URL(baseUrl + path);
      for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
      const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': USER_AGENT };
      if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
      if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
      const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

      let res: Response;
      let text: string;
      try {
        // The same signal bounds the body read, so a server that stalls mid-body also times out.
        res = await fetch(url, {
          method: spec.method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'error',
        });
        text = await res.text();
      } catch (err) {
        if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
          throw new CliError({
            code: CLI_CODES.timeout,
            message: `No answer from ${baseUrl} within ${Math.round(timeoutMs / 1000)} seconds (${spec.method} ${spec.path}).`,
            exitCode: EXIT.failure,
            hint: 'Check that the server is up and reachable, then retry.',
            cause: err,
          });
        }
        throw new CliError({
          code: CLI_CODES.network,
          message: `Could not reach ${baseUrl}: ${describeFailure(err)}.`,
          exitCode: EXIT.failure,
          hint: 'Check --base-url or REFTRACK_BASE_URL and that the server is running.',
          cause: err,
        });
      }

      let body: unknown = null;
      if (text !== '') {
        try {
          body = JSON.parse(text);
        } catch {
          body = null;
        }
      }
      const warnings = readWarnings(body, res.headers, res.ok);
      if (warnings.length > 0) options.onWarnings?.(warnings);

      if (!res.ok && res.status < 500 && !hasEnvelope(body)) throw notReftrackServer(baseUrl, route, res.status, res.headers);
      if (!res.ok) throw errorFromResponse({ route, status: res.status, body, headers: res.headers, baseUrl });
      if (!isRecord(body)) throw notReftrackServer(baseUrl, route, res.status, res.headers);
      return { status: res.status, headers: res.headers, body, warnings };
    },
  };
}
