/** Reads and parses JSON bodies with a size limit; keeps the raw bytes for signature checks. */
import type { Context } from 'koa';
import { ERRORS, LIMITS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { RequestState } from './state.js';
import { closeAfterAnswer, closesLingering } from './lingering-close.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Up to this many bytes of an oversized body are read and dropped before the 413 goes out, so the
 * connection can stay open for the client's next request. Anything larger is refused at once and
 * the connection closed, with a lingering close (lingering-close.ts) so the client sees the 413.
 */
const DRAIN_LIMIT = 8 * 1024 * 1024;

/**
 * The failure of a request whose client went away mid-body, for both body readers (this one and
 * the click lane's): a client's error. Node's own 'aborted' error carries ECONNRESET, which would
 * read as an unreachable database (ops/service-state.ts).
 */
export const bodyIncomplete = (): ApiError => new ApiError(ERRORS.bodyIncomplete);

function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length'));
  const req = ctx.req;
  if (declared > DRAIN_LIMIT) {
    closeAfterAnswer(ctx);
    return Promise.reject(new ApiError(ERRORS.bodyTooLarge));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = declared > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (size > DRAIN_LIMIT) {
        req.removeAllListeners('data');
        req.pause();
        closeAfterAnswer(ctx);
        reject(new ApiError(ERRORS.bodyTooLarge));
        return;
      }
      if (!tooLarge) chunks.push(chunk);
    });
    req.on('end', () => (tooLarge ? reject(new ApiError(ERRORS.bodyTooLarge)) : resolve(Buffer.concat(chunks, size))));
    // A settled promise ignores the later calls.
    req.on('error', () => reject(bodyIncomplete()));
    req.on('close', () => reject(bodyIncomplete()));
  });
}

/** A JSON body's value, or the error its handler throws when it reads it. */
export type ParsedBody = { body: Record<string, unknown> } | { error: ApiError };

/** Parses a whole body: empty is `{}`; anything but a JSON object, or a NUL escape, is an error. */
export function parseJsonBody(raw: Buffer): ParsedBody {
  if (raw.length === 0) return { body: {} };
  const text = raw.toString('utf8');
  // PostgreSQL cannot store NUL in text; refuse it here rather than fail in the database.
  if (text.includes('\\u0000')) return { error: new ApiError(ERRORS.bodyNulCharacter) };
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { error: new ApiError(ERRORS.bodyNotObject) };
    return { body: parsed as Record<string, unknown> };
  } catch {
    return { error: new ApiError(ERRORS.malformedJson) };
  }
}

/**
 * Reads the body of a POST, PUT, PATCH or DELETE up to `limit` bytes (413 beyond) and parses it
 * (unless `parse` is false); `preloaded` is a body the click lane already read. A parse error is
 * kept for the handler to throw when it reads the body, after authentication (5.3 comes first).
 */
export async function readJsonBody(ctx: Context, limit: number = LIMITS.maxJsonBodyBytes, preloaded?: Buffer, parse = true): Promise<void> {
  if (!METHODS_WITH_BODY.has(ctx.method)) return;
  const raw = preloaded ?? (await readRaw(ctx, limit));
  const state = ctx.state as RequestState;
  state.rawBody = raw;
  if (!parse) return;
  const parsed = parseJsonBody(raw);
  if ('error' in parsed) state.bodyError = parsed.error;
  else ctx.request.body = parsed.body;
}

/** How long an answer waits for the rest of a body nobody read before it goes out anyway. */
const DRAIN_WAIT_MS = 2000;

/**
 * A request refused before its body was read (a 429, a 401, a 404) still has the body in flight:
 * answering and closing the connection then would reset it, and the client might never see the
 * answer. So the body is read and dropped first, up to DRAIN_LIMIT bytes and DRAIN_WAIT_MS.
 */
export async function drainUnreadBody(ctx: Context): Promise<void> {
  const req = ctx.req;
  if (req.complete || req.readableEnded || req.destroyed) return;
  // Already closing with a lingering close (a body past DRAIN_LIMIT): the answer goes out at once.
  if (closesLingering(ctx)) return;
  if (Number(ctx.get('content-length')) > DRAIN_LIMIT) {
    closeAfterAnswer(ctx);
    return;
  }
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, DRAIN_WAIT_MS);
    req.once('end', done);
    req.once('close', done);
    req.once('error', done);
    req.resume();
  });
}

declare module 'koa' {
  interface Request {
    body?: unknown;
  }
}
