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
import type { KeyChangeWatch } from '../db/program-key-notices.js';

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
 * Keys found are remembered: every lead, sale and refund presents one, and the lookup was one
 * statement (one round trip on PostgreSQL) of each. The spec has a regeneration take effect at once
 * (5.4) and a rotation mark at once (5.5). In this process every change drops the cache at once
 * (`forgetProgramKeys`); changes made by other processes are bounded so:
 * - a key is trusted for half a second after it was read (KEY_CACHE_TTL_MS), on either engine;
 * - on PostgreSQL, for up to a minute while the process hears every change to program keys
 *   (db/program-key-notices.ts) and none has come since the key was read.
 * Only keys that exist are kept, so a stream of wrong keys cannot fill it.
 */
const KEY_CACHE_TTL_MS = 500;
const KEY_CACHE_WATCHED_TTL_MS = 60_000;
const KEY_CACHE_MAX = 10_000;

interface CachedKey {
  at: number;
  key: KeyContext;
  /** The watch's generation when the read began (undefined: no watch). */
  generation: number | undefined;
  /** Whether the watch could vouch for changes when the read began. */
  vouched: boolean;
  /** forgetProgramKeys's count when the read began. */
  forgotten: number;
}

/** One cache per database, with the watch of that database's changes when there is one. */
interface KeyCache {
  entries: Map<string, CachedKey>;
  watch: KeyChangeWatch | undefined;
}
const caches = new WeakMap<Db, KeyCache>();
/** Bumped by forgetProgramKeys: an entry from before is not used. */
let forgotten = 0;

function cacheOf(db: Db): KeyCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = { entries: new Map(), watch: undefined };
    caches.set(db, cache);
  }
  return cache;
}

/** Keys read through `db` are kept longer while `watch` vouches for them (server start; undone at close). */
export function watchProgramKeys(db: Db, watch: KeyChangeWatch): () => void {
  const cache = cacheOf(db);
  cache.watch = watch;
  cache.entries.clear();
  return () => {
    if (cache.watch === watch) cache.watch = undefined;
    cache.entries.clear();
  };
}

function usable(entry: CachedKey, watch: KeyChangeWatch | undefined, now: number): boolean {
  if (entry.forgotten !== forgotten) return false;
  // A change heard since the read ends the entry at once, however young it is.
  if (watch !== undefined && entry.generation !== undefined && entry.generation !== watch.generation) return false;
  const age = now - entry.at;
  if (age < KEY_CACHE_TTL_MS) return true;
  return watch !== undefined && entry.vouched && entry.generation === watch.generation && age < KEY_CACHE_WATCHED_TTL_MS && watch.trusted(now);
}

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
  forgotten++;
}

export async function findProgramKey(db: Db, token: string): Promise<KeyContext | undefined> {
  const hash = sha256Hex(token);
  const cache = cacheOf(db);
  const { watch } = cache;
  const now = Date.now();
  const hit = cache.entries.get(hash);
  if (hit && usable(hit, watch, now)) return hit.key;
  // Taken before the read: a change heard while the read is on its way makes the entry stale.
  const generation = watch?.generation;
  const vouched = watch?.trusted(now) ?? false;
  const epoch = forgotten;
  const row = await firstRow<KeyRow>(db, KEY_BY_HASH, [hash]);
  if (!row || !hashesEqual(row.key_hash, hash)) return undefined;
  const key: KeyContext = {
    keyId: row.id,
    programId: row.program_id,
    rotationMarkedAt: row.rotation_marked_at ?? null,
    rotationDeadline: row.rotation_deadline ?? null,
  };
  if (cache.entries.size >= KEY_CACHE_MAX) cache.entries.clear();
  cache.entries.set(hash, { at: now, key, generation, vouched, forgotten: epoch });
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
