import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { HEADERS } from '@reftrack/contract';
import type { RequestState } from './state.js';

/** Accept a caller's request id only when it is short and plain, so logs stay clean. */
const SAFE_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export async function requestId(ctx: Context, next: Next): Promise<void> {
  const incoming = ctx.get(HEADERS.requestId);
  const id = SAFE_ID.test(incoming) ? incoming : randomUUID();
  (ctx.state as RequestState).requestId = id;
  ctx.set(HEADERS.requestId, id);
  await next();
  if ((ctx.state as RequestState).omitRequestIdOn?.includes(ctx.status)) ctx.remove(HEADERS.requestId);
}
