/**
 * Turns a server error response into a CliError that says what to do. The server speaks two
 * envelopes (spec 7.1); both are read the same way: `error.code` first, then `error.message`.
 */
import { BRAND, ERROR_CODES, ERRORS, HEADERS, ROUTES, SALE_REFUND_CODE_BY_STATUS, type RouteName } from '@reftrack/contract';
import { CliError } from '../cli-error.js';
import { EXIT, exitCodeForStatus } from '../exit-codes.js';

const cli = BRAND.cli;

export type CliRouteName = Extract<RouteName, `cli${string}`>;

/** What a failed call needs to be fixed with: a new login, a new login session, or the program key. */
export type RouteKind = 'login_session' | 'login_token' | 'program_key';

export function routeKind(route: CliRouteName): RouteKind {
  const credential = ROUTES[route].credential;
  if (credential === 'login_token') return 'login_token';
  if (credential === 'program_key') return 'program_key';
  return 'login_session';
}

export interface ServerError {
  code: string | null;
  message: string | null;
  hint: string | null;
  requestId: string | null;
  retryAfterSeconds: number | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** Reads either envelope; anything else (an HTML error page, a proxy's text) yields nulls. */
export function readServerError(body: unknown): ServerError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : {};
  const details = isRecord(error.details) ? error.details : {};
  const retry = error.retry_after_seconds;
  return {
    // ACCOUNT_BLOCKED travels in details.code of the platform envelope (7.1).
    code: str(error.code) ?? str(details.code),
    message: str(error.message) ?? (isRecord(body) ? str(body.message) : null),
    hint: str(error.hint),
    requestId: str(details.request_id),
    retryAfterSeconds: typeof retry === 'number' && Number.isFinite(retry) && retry >= 0 ? retry : null,
  };
}

/** `Retry-After` as seconds: an integer, or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const EXTRA_CODES_BY_STATUS: Record<number, string> = { 403: 'forbidden', 405: 'method_not_allowed', 410: 'gone', 413: ERROR_CODES.invalidRequest, 429: ERROR_CODES.rateLimited };

/** A code for errors the server sent without one, so JSON output always has a machine-readable code. */
export function fallbackCode(status: number): string {
  return SALE_REFUND_CODE_BY_STATUS[status] ?? EXTRA_CODES_BY_STATUS[status] ?? (status >= 500 ? ERROR_CODES.internalError : 'http_error');
}

/** The fixed part of a `... (request_id: {request_id})` template, for matching the server's text. */
const templatePrefix = (template: string): string => template.split('{')[0]!.replace(/\s*\($/, '');

export interface HintContext {
  route: CliRouteName;
  status: number;
  code: string | null;
  message: string | null;
  serverHint: string | null;
  retryAfterSeconds: number | null;
  requestId: string | null;
  baseUrl: string;
}

/** The next step for the person, by code first, then by message, then by status and route kind. */
export function hintFor(ctx: HintContext): string {
  const kind = routeKind(ctx.route);
  switch (ctx.code) {
    case ERROR_CODES.rateLimited:
      if (ctx.message === ERRORS.cliChainCap.message) {
        return `The synthetic chain cap counts per program per hour${ctx.retryAfterSeconds !== null ? `; the next chain can run in ${ctx.retryAfterSeconds} seconds` : ''}. Single events (\`${cli} test-event click|lead|sale\`) still work.`;
      }
      return ctx.retryAfterSeconds !== null ? `Wait ${ctx.retryAfterSeconds} seconds, then retry.` : 'Wait a minute, then retry.';
    case ERROR_CODES.apiKeyRotationRequired:
      return ctx.serverHint ?? ERRORS.keyRotationRequired.hint ?? ERRORS.keyRotationRequired.message;
    case ERROR_CODES.accountBlocked:
      return 'This account cannot sign in. Ask a workspace owner or the service operator to restore it.';
  }

  const message = ctx.message ?? '';
  if (message === ERRORS.cliPollConsumed.message) return `This sign-in was already completed and its token handed out. Run \`${cli} login\` again.`;
  if (message === ERRORS.cliPollNotFound.message) return `This server does not know the sign-in session. Run \`${cli} login\` again, against the same --base-url.`;
  if (message === ERRORS.cliInitAdvertiserMismatch.message) return `Drop --advertiser-id to use your own workspace, or pass the advertiser_id that \`${cli} programs\` shows.`;
  if (message.startsWith(templatePrefix(ERRORS.cliInitFailed.message))) {
    return `The program may have been created anyway: run \`${cli} programs\` before retrying${ctx.requestId ? ` (request id ${ctx.requestId})` : ''}.`;
  }
  if (message === ERRORS.cliStripeConnectRetired.message) return 'Connect the payment processor in the dashboard.';
  if (message === ERRORS.cliProgramKeyAlreadyShown.message) return `The key was shown meanwhile (in the dashboard or another terminal). Run \`${cli} keys generate\` again: it asks before replacing it.`;
  if (message === ERRORS.ownerRequired.message) return `Ask a workspace owner to run \`${cli} keys generate\` or to generate the key in the dashboard. Logging in again does not change your role.`;
  if (ctx.status === 404 && message === ERRORS.routeNotFound.message) {
    return `The server at ${ctx.baseUrl} has no ${ROUTES[ctx.route].path} route. Check --base-url or REFTRACK_BASE_URL, or update the server.`;
  }

  if (ctx.status >= 500) {
    return `The server failed; retry in a few seconds.${ctx.requestId ? ` Quote request id ${ctx.requestId} if it keeps failing.` : ''}`;
  }
  if (ctx.status === 401 || ctx.status === 403) {
    if (kind === 'login_token') return `Run \`${cli} login\`, then retry. (A new program key does not fix this: the login token is what failed.)`;
    if (kind === 'program_key') {
      return `Check the program key in --api-key or REFTRACK_API_KEY (it starts with aff_). If it was regenerated, use the new one; a workspace owner can generate a new one with \`${cli} keys generate <program id>\` or in the dashboard (Program settings → API key). Logging in again does not fix this.`;
    }
    return `Run \`${cli} login\` again.`;
  }
  if (ctx.status === 400) {
    if (ctx.route === 'cliInit') return `Fix the value named above and run \`${cli} init\` again.`;
    if (ctx.route === 'cliTestEvent') return `Run \`${cli} test-event click|lead|sale|chain\`.`;
    if (kind === 'login_session') return `Run \`${cli} login\` again.`;
  }
  return 'Check the command and its flags, then retry.';
}

export interface ErrorResponse {
  route: CliRouteName;
  status: number;
  body: unknown;
  headers: Headers;
  baseUrl: string;
}

export function errorFromResponse(res: ErrorResponse): CliError {
  const server = readServerError(res.body);
  const code = server.code ?? fallbackCode(res.status);
  const retryAfterSeconds = parseRetryAfter(res.headers.get(HEADERS.retryAfter)) ?? server.retryAfterSeconds;
  const requestId = server.requestId ?? res.headers.get(HEADERS.requestId);
  let exitCode = exitCodeForStatus(res.status);
  if (code === ERROR_CODES.rateLimited) exitCode = EXIT.rateLimited;
  if (code === ERROR_CODES.apiKeyRotationRequired || code === ERROR_CODES.accountBlocked) exitCode = EXIT.auth;
  const message = server.message ?? `The server answered HTTP ${res.status} without an error message.`;
  return new CliError({
    code,
    message,
    status: res.status,
    exitCode,
    requestId,
    retryAfterSeconds,
    hint: hintFor({ route: res.route, status: res.status, code: server.code, message: server.message, serverHint: server.hint, retryAfterSeconds, requestId, baseUrl: res.baseUrl }),
  });
}
