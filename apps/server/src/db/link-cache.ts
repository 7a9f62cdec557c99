/**
 * The click route's read of a referral link with its partner and program. Cached for one second,
 * and dropped at once in this process when a link or program changes; other processes see a change
 * within the second.
 */
import type { Db } from './knex.js';
import { bool } from './knex.js';
import { firstRow } from './statement.js';

export interface ResolvedLink {
  id: number;
  active: boolean;
  partnerId: number | null;
  programId: number | null;
  partnerCode: string | null;
  programExists: boolean;
  attributionWindowDays: number;
}

const TTL_MS = 1000;

// A fixed text (db/statement.ts), prepared once per connection: with many links in use the cache
// misses often, and PostgreSQL spent four times as long planning knex's version of this join as
// running it (docs/performance.md, "Plans made once").
const LINK_BY_SHORT_LINK = `select l.id, l.active, l.partner_id, l.program_id, pa.code as partner_code, pr.id as program_row, pr.attribution_window_days
  from referral_links l left join partners pa on pa.id = l.partner_id left join programs pr on pr.id = l.program_id
  where l.short_link = ? limit 1`;

interface LinkRow {
  id: number;
  active: unknown;
  partner_id: number | null;
  program_id: number | null;
  partner_code: string | null;
  program_row: number | null;
  attribution_window_days: number | null;
}

export class LinkCache {
  private entries = new Map<string, { at: number; value: ResolvedLink | null }>();
  constructor(private readonly db: Db) {}

  async get(shortLink: string): Promise<ResolvedLink | null> {
    const now = Date.now();
    const hit = this.entries.get(shortLink);
    if (hit && now - hit.at < TTL_MS) return hit.value;
    const row = await firstRow<LinkRow>(this.db, LINK_BY_SHORT_LINK, [shortLink]);
    const value: ResolvedLink | null = row
      ? {
          id: row.id,
          active: bool(row.active),
          partnerId: row.partner_code ? row.partner_id : null,
          programId: row.program_row ?? null,
          partnerCode: row.partner_code ?? null,
          programExists: row.program_row != null,
          attributionWindowDays: row.attribution_window_days ?? 60,
        }
      : null;
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(shortLink, { at: now, value });
    return value;
  }

  invalidate(shortLink?: string): void {
    if (shortLink === undefined) this.entries.clear();
    else this.entries.delete(shortLink);
  }
}
