/**
 * Dashboard sessions: an httpOnly, SameSite=Lax cookie (Secure on HTTPS) holding a random token,
 * stored only as its SHA-256 hash, expiring after DASHBOARD_SESSION_DAYS. Mutating routes refuse
 * cross-site requests. A program key is never accepted here.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { BRAND, DASHBOARD_SESSION_COOKIE, DASHBOARD_SESSION_DAYS, ERRORS } from '@reftrack/contract';
import { ApiError } from '../http/api-error.js';
import { bool, type Db } from '../db/knex.js';
import { sha256Hex } from './secret-hash.js';
import { bearerToken } from './bearer.js';
import { accountBlocked } from '../accounts/sign-in.js';

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
 * A browser marks cross-site requests with `Sec-Fetch-Site` and `Origin`; mutating requests from
 * another origin are refused, so a session cookie cannot be ridden by a foreign page.
 */
function isCrossSite(ctx: Context, publicBaseUrl: string): boolean {
  const site = ctx.get('sec-fetch-site');
  if (site === 'cross-site') return true;
  const origin = ctx.get('origin');
  if (!origin) return false;
  const allowed = new Set([new URL(publicBaseUrl).origin, `${ctx.protocol}://${ctx.host}`]);
  return !allowed.has(origin);
}

export function requireSession(db: Db, publicBaseUrl: string, now: () => number) {
  return async function sessionGate(ctx: Context, next: Next): Promise<void> {
    const token = bearerToken(ctx.get('authorization'));
    if (token && !ctx.cookies.get(DASHBOARD_SESSION_COOKIE)) {
      throw new ApiError(token.startsWith(BRAND.programKeyPrefix) ? ERRORS.programKeyNotAccepted : ERRORS.sessionRequired);
    }
    if (!SAFE_METHODS.has(ctx.method) && isCrossSite(ctx, publicBaseUrl)) throw new ApiError(ERRORS.crossSiteRefused);
    const session = await readSession(db, ctx.cookies.get(DASHBOARD_SESSION_COOKIE), now());
    if (session === 'blocked') throw accountBlocked();
    if (!session) throw new ApiError(ERRORS.sessionRequired);
    ctx.state.account = session;
    await next();
  };
}
