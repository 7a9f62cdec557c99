/**
 * Program API keys (5.1–5.5): Bearer parsing with each endpoint's own messages, lookup by hash,
 * mandatory rotation headers and warnings, and the typed 401 once the deadline has passed.
 */
import type { Context } from 'koa';
import { docsUrl, ERRORS, formatMessage, HEADERS, type ErrorSpec, type RotationWarning } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { RequestState } from '../http/state.js';
import type { Db } from '../db/knex.js';
import { firstRow } from '../db/statement.js';
import { parseBearer } from './bearer.js';
import { hashesEqual, sha256Hex } from './secret-hash.js';
import type { KeyContext } from './key-context.js';

// The key's type lives in its own module so that http/state.ts can name it without importing this one.
export type { KeyContext } from './key-context.js';

/** The three 5.3 failures, worded per endpoint. */
export interface KeyErrors {
  malformed: ErrorSpec;
  missing: ErrorSpec;
  invalid: ErrorSpec;
}

export const KEY_ERRORS = {
  sale: { malformed: ERRORS.authMalformed, missing: ERRORS.authMissingToken, invalid: ERRORS.authInvalidToken },
  // The spec gives the refund route `Invalid API token` for an empty token too.
  refund: { malformed: ERRORS.authMalformed, missing: ERRORS.authInvalidToken, invalid: ERRORS.authInvalidToken },
  readiness: { malformed: ERRORS.readinessMalformed, missing: ERRORS.readinessMissing, invalid: ERRORS.readinessInvalid },
  cli: { malformed: ERRORS.cliKeyMalformed, missing: ERRORS.cliKeyMissing, invalid: ERRORS.cliKeyInvalid },
} satisfies Record<string, KeyErrors>;

/**
 * Keys found are remembered for half a second: every lead, sale and refund presents one, and the
 * lookup was one statement (one round trip on PostgreSQL) of each. The spec lets a rotation mark or
 * a regeneration take effect within a second (5.4, 5.5); in this process both drop the cache at
 * once (`forgetProgramKeys`). Only keys that exist are kept, so a stream of wrong keys cannot fill it.
 */
const KEY_CACHE_TTL_MS = 500;
const KEY_CACHE_MAX = 10_000;
const keyCache = new Map<string, { at: number; key: KeyContext }>();

interface KeyRow {
  id: number;
  program_id: number;
  key_hash: string;
  rotation_marked_at: number | null;
  rotation_deadline: number | null;
}
// A fixed text (db/statement.ts): with thousands of keys in use the cache misses often, and every
// lead and sale authenticates.
const KEY_BY_HASH = 'select id, program_id, key_hash, rotation_marked_at, rotation_deadline from program_keys where key_hash = ? limit 1';

/** Called by every change to program keys made in this process. */
export function forgetProgramKeys(): void {
  keyCache.clear();
}

export async function findProgramKey(db: Db, token: string): Promise<KeyContext | undefined> {
  const hash = sha256Hex(token);
  const now = Date.now();
  const hit = keyCache.get(hash);
  if (hit && now - hit.at < KEY_CACHE_TTL_MS) return hit.key;
  const row = await firstRow<KeyRow>(db, KEY_BY_HASH, [hash]);
  if (!row || !hashesEqual(row.key_hash, hash)) return undefined;
  const key: KeyContext = {
    keyId: row.id,
    programId: row.program_id,
    rotationMarkedAt: row.rotation_marked_at ?? null,
    rotationDeadline: row.rotation_deadline ?? null,
  };
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(hash, { at: now, key });
  return key;
}

export type KeyState = 'active' | 'marked' | 'retired';

export function keyState(key: KeyContext, now: number): KeyState {
  if (key.rotationDeadline === null) return 'active';
  return now >= key.rotationDeadline ? 'retired' : 'marked';
}

/** Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers on every response of a flagged key. */
export function setRotationHeaders(ctx: Context, key: KeyContext, publicBaseUrl: string): void {
  if (key.rotationDeadline === null) return;
  const markedAt = key.rotationMarkedAt ?? key.rotationDeadline;
  ctx.set(HEADERS.deprecation, `@${Math.floor(markedAt / 1000)}`);
  ctx.set(HEADERS.sunset, new Date(key.rotationDeadline).toUTCString());
  ctx.set(HEADERS.link, `<${docsUrl(publicBaseUrl, ERRORS.keyRotationRequired.code)}>; rel="deprecation"`);
}

export function rotationWarning(key: KeyContext, publicBaseUrl: string): RotationWarning {
  const rotateBy = new Date(key.rotationDeadline ?? 0).toISOString();
  return {
    code: 'api_key_rotation_required',
    message: formatMessage(ERRORS.keyRotationWarning.message, { deadline: rotateBy }),
    hint: ERRORS.keyRotationWarning.hint ?? '',
    rotate_by: rotateBy,
    docs_url: docsUrl(publicBaseUrl, 'api_key_rotation_required'),
  };
}

export function retiredKeyError(key: KeyContext, publicBaseUrl: string): ApiError {
  return new ApiError(
    ERRORS.keyRotationRequired,
    { deadline: new Date(key.rotationDeadline ?? 0).toISOString() },
    {},
    { docs_url: docsUrl(publicBaseUrl, 'api_key_rotation_required') },
  );
}

export interface KeyAuthOptions {
  db: Db;
  publicBaseUrl: string;
  now: () => number;
}

/**
 * Authenticates a program key: returns undefined only when `optional` and no token was sent
 * (browser-mode lead). Sets rotation headers; a retired key is refused with the typed 401.
 */
export async function authenticateProgramKey(ctx: Context, errors: KeyErrors, opts: KeyAuthOptions, optional = false): Promise<KeyContext | undefined> {
  const parsed = parseBearer(ctx.get('authorization') || undefined);
  if (optional && (parsed.kind === 'absent' || parsed.kind === 'empty')) return undefined;
  if (parsed.kind === 'absent' || parsed.kind === 'malformed') throw new ApiError(errors.malformed);
  if (parsed.kind === 'empty') throw new ApiError(errors.missing);
  const key = await findProgramKey(opts.db, parsed.token);
  if (!key) throw new ApiError(errors.invalid);
  setRotationHeaders(ctx, key, opts.publicBaseUrl);
  if (keyState(key, opts.now()) === 'retired') throw retiredKeyError(key, opts.publicBaseUrl);
  (ctx.state as RequestState).programKey = key;
  return key;
}

/** Adds the 5.5 `warnings` array beside `data` on every response of a marked key (3.2), errors included. */
export function addRotationWarning(ctx: Context, publicBaseUrl: string, now: () => number): void {
  const key = (ctx.state as RequestState).programKey;
  if (!key || keyState(key, now()) !== 'marked') return;
  const body = ctx.body;
  if (body && typeof body === 'object' && !Buffer.isBuffer(body)) {
    (body as Record<string, unknown>).warnings = [rotationWarning(key, publicBaseUrl)];
  }
}
