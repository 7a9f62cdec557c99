/**
 * Server-side click tracking on the advertiser's own domain: a visit carrying `?aff=...` becomes a
 * click call (4.1), and the answer becomes a first-party `reftrack_click_id` cookie set by the
 * server, which browsers keep longer than cookies written by scripts.
 *
 * A referral helper runs on the way to a page the visitor asked for, so by default it never throws
 * for an API failure (disabled link, rate limit, outage): it reports it and leaves the cookie alone.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { BRAND } from '@reftrack/contract';
import { Reftrack } from './client.js';
import { ReftrackError } from './errors.js';
import { assertKnownKeys, assertPlainObject, checkMaxRetries, checkTimeoutMs } from './options.js';

/** The query parameter that names the referral link (4.1 rule 1). */
const AFF_PARAM = 'aff';
const SECONDS_PER_DAY = 86_400;
/** A page render waits on this call, so it gets a shorter deadline than the client's default. */
const DEFAULT_REFERRAL_TIMEOUT_MS = 3_000;
/**
 * No retries by default: the visitor is waiting, and a click sent again after a lost answer
 * would be recorded twice (a click has no idempotency key).
 */
const DEFAULT_REFERRAL_MAX_RETRIES = 0;

export interface HandleReferralOptions {
  /** Client to send the click with. Default: a new client for `baseUrl` (or REFTRACK_BASE_URL). */
  client?: Reftrack;
  /** Service address, when no `client` is given. */
  baseUrl?: string;
  /** `Domain` attribute of the cookie, e.g. `.example.com` to share it with subdomains. Default: none (host only). */
  cookieDomain?: string;
  /** Read the scheme and host from X-Forwarded-Proto / X-Forwarded-Host (only behind a proxy you run). */
  trustProxy?: boolean;
  /** Deadline of the click call. Default 3000 ms. */
  timeoutMs?: number;
  /** Retries of the click call. Default 0. */
  maxRetries?: number;
  /** Throw API failures instead of returning them as `action: 'failed'`. Default false. */
  throwOnError?: boolean;
}

export type HandleReferralResult =
  | { action: 'none'; reason: 'no_aff_parameter' | 'no_request_url'; clickId: string | null; setCookie: null }
  | {
      action: 'tracked';
      clickId: string;
      partnerCode: string;
      cookieWindowDays: number;
      /** Value for a `Set-Cookie` header; null when the visitor's cookie already holds this click id. */
      setCookie: string | null;
      requestId: string | null;
    }
  | { action: 'failed'; error: ReftrackError; clickId: string | null; setCookie: null };

/** A WHATWG `Request` (fetch handlers, Next.js, Hono, Remix, Deno-style servers). */
export interface WebRequestLike {
  url: string;
  headers: { get(name: string): string | null };
}

/** Node's request, possibly Express's (whose `originalUrl` survives router mounting). */
export type NodeRequestLike = IncomingMessage & { originalUrl?: string };

interface RequestFacts {
  url: URL | null;
  userAgent: string | undefined;
  referer: string | undefined;
  cookieHeader: string | undefined;
}

interface ResolvedReferralOptions {
  client: Reftrack;
  cookieDomain: string | undefined;
  trustProxy: boolean;
  timeoutMs: number;
  maxRetries: number;
  throwOnError: boolean;
}

const OPTION_KEYS = ['client', 'baseUrl', 'cookieDomain', 'trustProxy', 'timeoutMs', 'maxRetries', 'throwOnError'] as const;

function resolveReferralOptions(options: unknown): ResolvedReferralOptions {
  assertPlainObject('handleReferral options', options);
  assertKnownKeys('handleReferral options', options, OPTION_KEYS, 'option');
  const o = options as HandleReferralOptions;
  if (o.client !== undefined && !(o.client instanceof Reftrack)) throw new TypeError('handleReferral options.client must be a Reftrack client.');
  if (o.client !== undefined && o.baseUrl !== undefined) throw new TypeError('handleReferral options: pass either client or baseUrl, not both.');
  if (o.cookieDomain !== undefined && (typeof o.cookieDomain !== 'string' || !/^\.?[A-Za-z0-9.-]+$/.test(o.cookieDomain))) {
    throw new TypeError(`handleReferral options.cookieDomain must be a domain name such as ".example.com", got ${String(o.cookieDomain)}.`);
  }
  for (const flag of ['trustProxy', 'throwOnError'] as const) {
    if (o[flag] !== undefined && typeof o[flag] !== 'boolean') throw new TypeError(`handleReferral options.${flag} must be a boolean.`);
  }
  return {
    client: o.client ?? new Reftrack(o.baseUrl === undefined ? {} : { baseUrl: o.baseUrl }),
    cookieDomain: o.cookieDomain,
    trustProxy: o.trustProxy ?? false,
    timeoutMs: o.timeoutMs === undefined ? DEFAULT_REFERRAL_TIMEOUT_MS : checkTimeoutMs('handleReferral options.timeoutMs', o.timeoutMs),
    maxRetries: o.maxRetries === undefined ? DEFAULT_REFERRAL_MAX_RETRIES : checkMaxRetries('handleReferral options.maxRetries', o.maxRetries),
    throwOnError: o.throwOnError ?? false,
  };
}

function isWebRequest(request: unknown): request is WebRequestLike {
  const candidate = request as Partial<WebRequestLike> | null;
  return typeof candidate?.url === 'string' && typeof candidate.headers?.get === 'function';
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value?.split(',')[0];
  const trimmed = first?.trim();
  return trimmed === '' ? undefined : trimmed;
}

function parseUrl(value: string, base?: string): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

function readRequest(request: WebRequestLike | NodeRequestLike, trustProxy: boolean, originalUrl?: string): RequestFacts {
  if (isWebRequest(request)) {
    return {
      url: parseUrl(request.url),
      userAgent: request.headers.get('user-agent') ?? undefined,
      referer: request.headers.get('referer') ?? undefined,
      cookieHeader: request.headers.get('cookie') ?? undefined,
    };
  }
  const { headers } = request;
  const forwardedProto = trustProxy ? firstHeader(headers['x-forwarded-proto']) : undefined;
  const forwardedHost = trustProxy ? firstHeader(headers['x-forwarded-host']) : undefined;
  const scheme = forwardedProto ?? ((request.socket as TLSSocket | undefined)?.encrypted ? 'https' : 'http');
  const host = forwardedHost ?? headers.host;
  const path = originalUrl ?? request.originalUrl ?? request.url ?? '/';
  return {
    url: host ? parseUrl(path, `${scheme}://${host}`) : null,
    userAgent: headers['user-agent'],
    referer: headers.referer,
    cookieHeader: headers.cookie,
  };
}

/** The value of one cookie from a `Cookie` request header, or null. */
export function readCookie(cookieHeader: string | undefined, name: string): string | null {
  if (!cookieHeader) return null;
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    const raw = pair.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    if (raw === '') return null;
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return null;
}

/**
 * The click cookie of the browser tracker conventions (part 1): first-party, readable by the
 * page's script (so no HttpOnly: the front end forwards the id to the server at signup),
 * SameSite=Lax, Secure only on HTTPS, kept for the program's cookie window.
 */
export function buildClickCookie(clickId: string, cookieWindowDays: number, options: { domain?: string; secure: boolean }): string {
  const parts = [
    `${BRAND.cookieName}=${encodeURIComponent(clickId)}`,
    `Max-Age=${Math.round(cookieWindowDays * SECONDS_PER_DAY)}`,
    'Path=/',
    'SameSite=Lax',
  ];
  if (options.domain) parts.push(`Domain=${options.domain}`);
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}

async function handleFacts(facts: RequestFacts, options: ResolvedReferralOptions): Promise<HandleReferralResult> {
  const existing = readCookie(facts.cookieHeader, BRAND.cookieName);
  if (facts.url === null) return { action: 'none', reason: 'no_request_url', clickId: existing, setCookie: null };
  if (!facts.url.searchParams.get(AFF_PARAM)) return { action: 'none', reason: 'no_aff_parameter', clickId: existing, setCookie: null };

  try {
    const click = await options.client.trackClick(
      {
        affiliateUrl: facts.url.href,
        userAgent: facts.userAgent,
        referrerUrl: facts.referer,
        existingClickId: existing ?? undefined,
      },
      { timeoutMs: options.timeoutMs, maxRetries: options.maxRetries },
    );
    // First-click attribution: the server answers an existing click id with that same id (the
    // customer stays with the first partner), and then the cookie is left as it is. A different
    // id means the old one matched no customer (expired, or from a reset service), so it is replaced.
    const keep = existing !== null && click.click_id === existing;
    return {
      action: 'tracked',
      clickId: click.click_id,
      partnerCode: click.partner_code,
      cookieWindowDays: click.cookie_window_days,
      setCookie: keep
        ? null
        : buildClickCookie(click.click_id, click.cookie_window_days, { domain: options.cookieDomain, secure: facts.url.protocol === 'https:' }),
      requestId: click.requestId,
    };
  } catch (error) {
    if (error instanceof ReftrackError && !options.throwOnError) return { action: 'failed', error, clickId: existing, setCookie: null };
    throw error;
  }
}

/**
 * Turns `?aff=...` on an incoming request into a click and returns the `Set-Cookie` value to send.
 * Accepts a Node `IncomingMessage` (plain `http`, Express, Koa's `ctx.req`) or a WHATWG `Request`.
 */
export async function handleReferral(request: WebRequestLike | NodeRequestLike, options: HandleReferralOptions = {}): Promise<HandleReferralResult> {
  const resolved = resolveReferralOptions(options);
  return handleFacts(readRequest(request, resolved.trustProxy), resolved);
}

export interface KoaContextLike {
  req: IncomingMessage;
  res: ServerResponse;
  originalUrl?: string;
  state?: Record<string, unknown>;
}

type ExpressResponseLike = ServerResponse & { locals?: Record<string, unknown> };

export interface ReferralMiddleware {
  /** Node `http` (await it; resolves to the result, or null for a request that is not a GET) and Express (`next` given). */
  (req: NodeRequestLike, res: ExpressResponseLike, next?: (error?: unknown) => void): Promise<HandleReferralResult | null>;
  /** Koa. */
  (ctx: KoaContextLike, next: () => Promise<unknown>): Promise<unknown>;
}

function appendSetCookie(res: ServerResponse, value: string | null): void {
  if (value !== null && !res.headersSent) res.appendHeader('Set-Cookie', value);
}

/**
 * Middleware for Node `http`, Express and Koa. Only GET requests are looked at: a referral arrives
 * as a page visit, not as a form post or an API call. The result is left in `res.locals.reftrack`
 * (Express) or `ctx.state.reftrack` (Koa).
 */
export function referralMiddleware(options: HandleReferralOptions = {}): ReferralMiddleware {
  const resolved = resolveReferralOptions(options);

  async function run(req: NodeRequestLike, res: ServerResponse, originalUrl?: string): Promise<HandleReferralResult | null> {
    if (req.method !== 'GET') return null;
    const result = await handleFacts(readRequest(req, resolved.trustProxy, originalUrl), resolved);
    appendSetCookie(res, result.setCookie);
    return result;
  }

  async function middleware(...args: unknown[]): Promise<unknown> {
    if (typeof args[1] === 'function') {
      const ctx = args[0] as KoaContextLike;
      const next = args[1] as () => Promise<unknown>;
      const result = await run(ctx.req, ctx.res, ctx.originalUrl);
      if (result && ctx.state) ctx.state.reftrack = result;
      return next();
    }
    const [req, res, next] = args as [NodeRequestLike, ExpressResponseLike, ((error?: unknown) => void) | undefined];
    if (!next) return run(req, res);
    let result: HandleReferralResult | null;
    try {
      result = await run(req, res);
    } catch (error) {
      next(error);
      return null;
    }
    if (result && res.locals) res.locals.reftrack = result;
    next();
    return result;
  }
  return middleware as ReferralMiddleware;
}
