/**
 * Referral links as the dashboard shows them, and creating one (2.3, 3.3): the one path by which an
 * owner's new link, an approved application's default link and an approved link request are made,
 * so every link follows the same rules (its partner enrolled, `link.created` in the same transaction).
 */
import type { Knex } from 'knex';
import type { DashboardLink, EventActor } from '@reftrack/contract';
import type { AppDeps } from '../deps.js';
import { insertId } from '../db/insert-id.js';
import { appendEvents } from '../db/outbox.js';
import { bool } from '../db/knex.js';
import { enrollPartner } from './partners.js';
import { DEMO_SHOP_PATH } from '../seed/demo.js';

type LinkDeps = Pick<AppDeps, 'demo' | 'config'>;

export function linkQuery(db: Knex) {
  return db('referral_links as l')
    .leftJoin('partners as pa', 'pa.id', 'l.partner_id')
    .leftJoin('programs as pr', 'pr.id', 'l.program_id')
    .select('l.id', 'l.short_link', 'l.partner_id', 'pa.code as partner_code', 'l.program_id', 'pr.domain', 'l.clicks', 'l.last_clicked', 'l.active', 'l.created_at');
}

/**
 * The address a partner shares: the program's site with `?aff=`; while `start --demo` runs, the demo
 * program's links lead to the demo shop, whose page carries the tracker (its domain, localhost, has none).
 */
export function shareUrl(deps: LinkDeps, programId: number | null, shortLink: string, domain: string | null): string | null {
  const aff = encodeURIComponent(shortLink);
  if (deps.demo && programId === deps.demo.programId) return `${deps.config.publicBaseUrl}${DEMO_SHOP_PATH}?aff=${aff}`;
  return domain ? `https://${domain}/?aff=${aff}` : null;
}

export function linkView(deps: LinkDeps, row: Record<string, unknown>): DashboardLink {
  const programId = row.program_id == null ? null : Number(row.program_id);
  return {
    id: Number(row.id),
    short_link: row.short_link as string,
    partner_id: row.partner_id == null ? null : Number(row.partner_id),
    partner_code: (row.partner_code as string | null) ?? null,
    program_id: programId,
    url: shareUrl(deps, programId, String(row.short_link), (row.domain as string | null) ?? null),
    clicks: Number(row.clicks),
    last_clicked: row.last_clicked == null ? null : new Date(Number(row.last_clicked)).toISOString(),
    active: bool(row.active),
  };
}

export interface NewLink {
  shortLink: string;
  partnerId: number;
  programId: number;
  active: boolean;
}

/**
 * Creates a link in `trx`: enrolls its partner in the program (so its sales can be commissioned),
 * inserts it and writes `link.created`. A taken short_link throws the database's unique violation;
 * the caller answers 409 and, once committed, invalidates the link cache.
 */
export async function createReferralLink(trx: Knex.Transaction, deps: LinkDeps, link: NewLink, actor: EventActor, now: number): Promise<DashboardLink> {
  await enrollPartner(trx, link.partnerId, link.programId, now, actor);
  const id = await insertId(trx, 'referral_links', { short_link: link.shortLink, partner_id: link.partnerId, program_id: link.programId, active: link.active, created_at: now });
  const view = linkView(deps, await linkQuery(trx).where('l.id', id).first());
  await appendEvents(trx, [{ type: 'link.created', programId: link.programId, data: { link: view }, occurredAt: now, actor }]);
  return view;
}

/** A short_link (or partner code) not taken yet: `base` itself, else `base-xxxx` with a random suffix. */
export async function freeIdentifier(db: Knex, table: 'referral_links' | 'partners', column: 'short_link' | 'code', base: string): Promise<string> {
  const stem = base.slice(0, 90) || 'partner';
  for (let i = 0; i < 8; i++) {
    const candidate = i === 0 ? stem : `${stem}-${Math.random().toString(36).slice(2, 6)}`;
    if (!(await db(table).where(column, candidate).first('id'))) return candidate;
  }
  return `${stem}-${Date.now().toString(36)}`;
}
