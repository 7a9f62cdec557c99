/**
 * Dashboard sessions: an httpOnly, SameSite=Lax cookie (Secure on HTTPS) holding a random token,
 * stored only as its SHA-256 hash, expiring after DASHBOARD_SESSION_DAYS. Every state-changing
 * request that creates, uses or ends a session must be same-origin JSON (`sessionWriteGuard`).
 * A program key is never accepted here.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Middleware, Next } from 'koa';
import { BRAND, DASHBOARD_SESSION_COOKIE, DASHBOARD_SESSION_DAYS, ERRORS } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { bool, type Db } from '../db/knex.js';
import { sha256Hex } from './secret-hash.js';
import { bearerToken } from './bearer.js';
import { accountBlocked } from '../accounts/sign-in.js';
import type { DashboardOrigins } from '../http/origins.js';

export interface SessionAccount {
  sessionId: number;
  accountId: number;
  email: string;
  name: string | null;
}

declare module 'koa' {
  interface DefaultState {
    account?: SessionAccount;
  }
}

const SESSION_MS = DASHBOARD_SESSION_DAYS * 86_400_000;

export async function createSession(db: Db, accountId: number, now: number): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + SESSION_MS;
  await db('dashboard_sessions').insert({ token_hash: sha256Hex(token), account_id: accountId, created_at: now, expires_at: expiresAt });
  return { token, expiresAt };
}

function isHttps(ctx: Context, publicBaseUrl: string): boolean {
  return ctx.secure || publicBaseUrl.startsWith('https://');
}

/** Written by hand: the cookie must be Secure behind an HTTPS proxy even when the hop to us is plain HTTP. */
function cookieHeader(value: string, expiresAt: number, secure: boolean): string {
  const parts = [`${DASHBOARD_SESSION_COOKIE}=${value}`, 'Path=/', `Expires=${new Date(expiresAt).toUTCString()}`, 'HttpOnly', 'SameSite=Lax'];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

export function setSessionCookie(ctx: Context, publicBaseUrl: string, token: string, expiresAt: number): void {
  ctx.append('Set-Cookie', cookieHeader(token, expiresAt, isHttps(ctx, publicBaseUrl)));
}

export function clearSessionCookie(ctx: Context, publicBaseUrl: string): void {
  ctx.append('Set-Cookie', cookieHeader('', 0, isHttps(ctx, publicBaseUrl)));
}

export async function endSession(db: Db, token: string | undefined): Promise<void> {
  if (token) await db('dashboard_sessions').where({ token_hash: sha256Hex(token) }).delete();
}

export async function readSession(db: Db, token: string | undefined, now: number): Promise<SessionAccount | 'blocked' | undefined> {
  if (!token || token.length > 200) return undefined;
  const row = await db('dashboard_sessions as s')
    .join('accounts as a', 'a.id', 's.account_id')
    .where('s.token_hash', sha256Hex(token))
    .first('s.id', 's.account_id', 's.expires_at', 'a.email', 'a.name', 'a.suspended');
  if (!row || Number(row.expires_at) <= now) return undefined;
  if (bool(row.suspended)) return 'blocked';
  return { sessionId: row.id, accountId: row.account_id, email: row.email, name: row.name ?? null };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser marks cross-site requests with `Sec-Fetch-Site` and `Origin`. Only the dashboard's own
 * origins count (http/origins.ts): another port of the same host, or a sibling subdomain, is
 * "same-site" to the browser — it would carry the SameSite=Lax cookie — but not the same origin.
 * A client that sends neither header is not a browser acting for someone else (curl, scripts).
 */
function isCrossSite(ctx: Context, origins: DashboardOrigins): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = ctx.get('origin');
  return origin !== '' && !origins.allows(origin);
}

/**
 * Login CSRF and session riding: a state-changing request that creates, uses or ends a dashboard
 * session must come from the dashboard's own origin and carry `Content-Type: application/json`.
 * A cross-site HTML form can only send `text/plain`, `multipart/form-data` or
 * `application/x-www-form-urlencoded`, and a cross-site `fetch` with a JSON body needs a CORS
 * preflight that this server never grants — so a foreign page can neither sign a visitor in as
 * the attacker nor act with the visitor's cookie.
 */
export function sessionWriteGuard(origins: DashboardOrigins): Middleware {
  return async function sameOriginJson(ctx: Context, next: Next): Promise<void> {
    if (!SAFE_METHODS.has(ctx.method)) {
      if (isCrossSite(ctx, origins)) throw new ApiError(ERRORS.crossSiteRefused);
      if (ctx.request.type.trim().toLowerCase() !== 'application/json') throw new ApiError(ERRORS.jsonContentTypeRequired);
    }
    await next();
  };
}

export function requireSession(db: Db, origins: DashboardOrigins, now: () => number) {
  const guard = sessionWriteGuard(origins);
  return async function sessionGate(ctx: Context, next: Next): Promise<void> {
    const token = bearerToken(ctx.get('authorization'));
    if (token && !ctx.cookies.get(DASHBOARD_SESSION_COOKIE)) {
      throw new ApiError(token.startsWith(BRAND.programKeyPrefix) ? ERRORS.programKeyNotAccepted : ERRORS.sessionRequired);
    }
    await guard(ctx, async () => {
      const session = await readSession(db, ctx.cookies.get(DASHBOARD_SESSION_COOKIE), now());
      if (session === 'blocked') throw accountBlocked();
      if (!session) throw new ApiError(ERRORS.sessionRequired);
      ctx.state.account = session;
      await next();
    });
  };
}
