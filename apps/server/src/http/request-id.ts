import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Context } from 'koa';
import { HEADERS } from '@reftrack/contract';
import type { RequestState } from './state.js';

/** Accept a caller's request id only when it is short and plain, so logs stay clean. */
const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;
const HEADER = HEADERS.requestId.toLowerCase();

/** The caller's X-Request-ID when it is safe, else a new one (7.2). */
export function requestIdFor(headers: IncomingHttpHeaders): string {
  const incoming = headers[HEADER];
  return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
}

/** Gives the request its id and sets it on the response (7.2). */
export function assignRequestId(ctx: Context): void {
  const id = requestIdFor(ctx.req.headers);
  (ctx.state as RequestState).requestId = id;
  ctx.set(HEADERS.requestId, id);
}

/** Routes that answer some statuses without X-Request-ID (spec 4: GET /api/v1/cli/status). */
export function dropOmittedRequestId(ctx: Context): void {
  if ((ctx.state as RequestState).omitRequestIdOn?.includes(ctx.status)) ctx.remove(HEADERS.requestId);
}
