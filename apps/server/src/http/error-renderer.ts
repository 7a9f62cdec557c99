/** The one place errors become response bodies: platform or typed envelope (7.1). */
import type { Context } from 'koa';
import { ERRORS, HEADERS, SALE_REFUND_CODE_BY_STATUS, STATUS_NAMES, type ErrorSpec } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { RequestState } from './state.js';
import type { Logger } from '../logger.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnreachable, type ServiceState } from '../ops/service-state.js';

/** Koa/http-errors thrown by libraries (e.g. a refused body) carry `status` and `expose`. */
function fromForeignError(err: unknown): ApiError | undefined {
  const e = err as { status?: number; expose?: boolean; type?: string } | null;
  if (!e || typeof e.status !== 'number' || !e.expose) return undefined;
  if (e.status === 413) return new ApiError(ERRORS.bodyTooLarge);
  if (e.status === 400) return new ApiError(ERRORS.malformedJson);
  return undefined;
}

/**
 * The platform envelope of a catalogue entry, as JSON text, for answers written before Koa runs
 * (a refused Host, a request the HTTP parser refused).
 */
export function platformErrorJson(spec: ErrorSpec): string {
  return JSON.stringify({ data: null, error: { status: spec.status, name: STATUS_NAMES[spec.status] ?? 'Error', message: spec.message, details: {} } });
}

export function renderError(ctx: Context, err: ApiError): void {
  const state = ctx.state as RequestState;
  const { spec } = err;
  ctx.status = spec.status;
  if (spec.envelope === 'typed') {
    const error: Record<string, unknown> = { code: spec.code, message: err.message };
    if (spec.hint) error.hint = spec.hint;
    Object.assign(error, err.extra);
    ctx.body = spec.code === 'link_disabled' ? { success: false, message: err.message, error } : { error };
    return;
  }
  const details: Record<string, unknown> = { ...err.details };
  if (state.requestIdInDetails && spec.status >= 500) details.request_id = state.requestId;
  const error: Record<string, unknown> = {
    status: spec.status,
    name: STATUS_NAMES[spec.status] ?? 'Error',
    message: err.message,
    details,
  };
  const code = spec.code ?? (state.codeFromStatus ? SALE_REFUND_CODE_BY_STATUS[spec.status] : undefined);
  if (code) error.code = code;
  ctx.body = { data: null, error };
}

/** A request no route answered: 404, or 405 from allowedMethods, in the platform envelope. */
export function renderUnanswered(ctx: Context): void {
  if (ctx.status === 404 && ctx.body === undefined) renderError(ctx, new ApiError(ERRORS.routeNotFound));
  else if (ctx.status === 405 && (ctx.body === undefined || typeof ctx.body === 'string')) renderError(ctx, new ApiError(ERRORS.methodNotAllowed));
}

/** Anything thrown while handling a request: catalogue errors as they are, the rest as the route's failure (logged). */
export function renderFailure(ctx: Context, err: unknown, logger: Logger, service?: ServiceState): void {
  const state = ctx.state as RequestState;
  let apiError = err instanceof ApiError ? err : fromForeignError(err);
  if (!apiError && service && isDatabaseUnreachable(err)) {
    // The database is down: the route's own failure (status and message as the spec has them),
    // with Retry-After; one log line when the state changes (service-state.ts), not a stack per request.
    service.databaseFailed(err);
    apiError = new ApiError(state.failure ?? ERRORS.internal, { request_id: state.requestId }, {}, state.failureExtra);
    ctx.set(HEADERS.retryAfter, String(DATABASE_RETRY_AFTER_SECONDS));
  } else if (!apiError) {
    logger.error({ err, requestId: state.requestId, path: state.logPath ?? ctx.path }, 'request failed');
    const failure = state.failure ?? ERRORS.internal;
    apiError = new ApiError(failure, { request_id: state.requestId }, {}, state.failureExtra);
  } else if (apiError.status >= 500 && apiError.spec !== ERRORS.serviceUnavailable) {
    // A 503 is a known state (a dependency down, logged when it changed), not a failure to log per request.
    logger.error({ err, requestId: state.requestId, path: state.logPath ?? ctx.path }, 'request failed');
  }
  renderError(ctx, apiError);
}
