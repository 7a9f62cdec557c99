/** One structured log line per request: method, route path, status, duration and request id — never headers or bodies. */
import type { Context } from 'koa';
import type { Logger } from '../logger.js';
import type { RequestState } from './state.js';

export interface RequestLine {
  requestId: string;
  method: string;
  path: string;
  status: number;
}

/** `started` is the request's performance.now() at arrival. */
export function logRequestLine(logger: Logger, line: RequestLine, started: number): void {
  logger.info({ ...line, ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
}

export function logRequest(logger: Logger, ctx: Context, started: number): void {
  const state = ctx.state as RequestState;
  logRequestLine(logger, { requestId: state.requestId, method: ctx.method, path: state.logPath ?? ctx.path, status: ctx.status }, started);
}
