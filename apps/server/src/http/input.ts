import type { Context } from 'koa';
import type { RequestState } from './state.js';
/** The request body as the routes read it; the member readers are in domain/json-values.ts. */
import type { Body } from '../domain/json-values.js';

/** The request's JSON object; throws the body's parse error, if any, now that the handler asks. */
export function readBody(ctx: Context): Body {
  const error = (ctx.state as RequestState).bodyError;
  if (error) throw error;
  const value = ctx.request.body;
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Body) : {};
}
