/**
 * `last_used_at` of a credential, at minute resolution: the row was read to authenticate anyway, so
 * a write happens only when the stored time is a minute old — at most one a minute per credential,
 * however many requests it makes. The condition is in the UPDATE too, so processes that read the
 * same stale time write it once between them.
 */
import type { Db } from '../db/knex.js';

export const LAST_USED_RESOLUTION_MS = 60_000;

export async function touchLastUsed(db: Db, table: 'cli_tokens' | 'agent_keys', id: number, lastUsedAt: unknown, now: number): Promise<void> {
  if (lastUsedAt !== null && lastUsedAt !== undefined && now - Number(lastUsedAt) < LAST_USED_RESOLUTION_MS) return;
  await db(table)
    .where({ id })
    .andWhere((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<=', now - LAST_USED_RESOLUTION_MS))
    .update({ last_used_at: now });
}
