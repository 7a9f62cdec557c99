/**
 * Partner portal sessions (docs/partners.md): a cookie of its own (PORTAL_SESSION_COOKIE), a random
 * token stored only as its SHA-256 hash. The dashboard's gate reads only the dashboard's cookie and
 * this gate only the portal's, so a partner's session never opens the dashboard API and an
 * advertiser's session never opens the portal API. Writes are same-origin JSON (sessionWriteGuard).
 */
import { randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Knex } from 'knex';
import { ERRORS, PORTAL_LIMITS, PORTAL_SESSION_COOKIE } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import { sha256Hex } from './secret-hash.js';
import { sessionWriteGuard } from './dashboard-session.js';
import type { DashboardOrigins } from '../http/origins.js';

export interface PortalPerson {
  sessionId: number;
  personId: number;
  email: string;
}

declare module 'koa' {
  interface DefaultState {
    portalPerson?: PortalPerson;
  }
}

const SESSION_MS = PORTAL_LIMITS.sessionDays * 86_400_000;

export async function createPortalSession(db: Knex | Knex.Transaction, personId: number, now: number): Promise<{ token: string; expiresAt: number }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + SESSION_MS;
  await db('portal_sessions').insert({ token_hash: sha256Hex(token), person_id: personId, created_at: now, expires_at: expiresAt });
  return { token, expiresAt };
}

function cookieHeader(ctx: Context, publicBaseUrl: string, value: string, expiresAt: number): string {
  const parts = [`${PORTAL_SESSION_COOKIE}=${value}`, 'Path=/', `Expires=${new Date(expiresAt).toUTCString()}`, 'HttpOnly', 'SameSite=Lax'];
  if (ctx.secure || publicBaseUrl.startsWith('https://')) parts.push('Secure');
  return parts.join('; ');
}

export const setPortalCookie = (ctx: Context, publicBaseUrl: string, token: string, expiresAt: number): void => ctx.append('Set-Cookie', cookieHeader(ctx, publicBaseUrl, token, expiresAt));
export const clearPortalCookie = (ctx: Context, publicBaseUrl: string): void => ctx.append('Set-Cookie', cookieHeader(ctx, publicBaseUrl, '', 0));

export async function endPortalSession(db: Knex, token: string | undefined): Promise<void> {
  if (token) await db('portal_sessions').where({ token_hash: sha256Hex(token) }).delete();
}

async function readPortalSession(db: Knex, token: string | undefined, now: number): Promise<PortalPerson | undefined> {
  if (!token || token.length > 200) return undefined;
  const row = await db('portal_sessions as s').join('portal_people as p', 'p.id', 's.person_id').where('s.token_hash', sha256Hex(token)).first('s.id', 's.person_id', 's.expires_at', 'p.email');
  if (!row || Number(row.expires_at) <= now) return undefined;
  return { sessionId: Number(row.id), personId: Number(row.person_id), email: row.email };
}

export function requirePortalSession(db: Knex, origins: DashboardOrigins, now: () => number) {
  const guard = sessionWriteGuard(origins);
  return async function portalGate(ctx: Context, next: Next): Promise<void> {
    await guard(ctx, async () => {
      const person = await readPortalSession(db, ctx.cookies.get(PORTAL_SESSION_COOKIE), now());
      if (!person) throw new ApiError(ERRORS.portalSessionRequired);
      ctx.state.portalPerson = person;
      await next();
    });
  };
}
