/**
 * `reftrack-server stats rebuild` (docs/analytics.md "Backfill"): recomputes every rollup row from
 * the raw events — once after the upgrade that adds the rollups (events recorded before it are in
 * no rollup), or to apply a newer bot list or another unique-click window to the past. It re-checks
 * each click's user agent against the bot list and updates the click's flag. Run it with the
 * servers stopped: it deletes the rollups, then adds the events back, so a click recorded meanwhile
 * could be missed or counted twice.
 */
import type { Knex } from 'knex';
import { bool } from '../db/knex.js';
import { outboxTail } from '../db/outbox.js';
import { STATS_CONVERSIONS_CONSUMER } from '../jobs/stats-conversions.js';
import { STATS_CLICKS_CONSUMER } from '../jobs/stats-clicks.js';
import { RECENT, RollupSet, SETTLED, upsertRollups, type Counters } from '../db/stats-rollups.js';
import { clickDimensions, type ClickFacts } from '../domain/click-dimensions.js';
import { UniqueClickWindow } from '../domain/unique-clicks.js';
import { parseUserAgent } from '../domain/user-agent.js';

const CHUNK = 2000;

export interface RebuildReport {
  clicks: number;
  bots: number;
  bot_flags_changed: number;
  leads: number;
  sales: number;
  refunds: number;
}

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (v == null ? null : Number(v));

/** Clicks in time order, so the unique-click window runs forward as it did live. */
async function rebuildClicks(db: Knex, uniqueWindowMs: number, report: RebuildReport): Promise<void> {
  const unique = new UniqueClickWindow(uniqueWindowMs);
  let after = { at: -1, id: 0 };
  for (;;) {
    const rows: Row[] = await db('click_events')
      .where('is_test', false)
      .where((q) => q.where('click_timestamp', '>', after.at).orWhere((w) => w.where('click_timestamp', after.at).where('id', '>', after.id)))
      .orderBy([{ column: 'click_timestamp' }, { column: 'id' }])
      .limit(CHUNK)
      .select('id', 'program_id', 'link_id', 'partner_id', 'click_id', 'user_agent', 'page_url', 'referrer_url', 'geo_country', 'device_type', 'browser_name', 'click_timestamp', 'is_bot');
    if (rows.length === 0) return;
    const set = new RollupSet();
    const nowBot: number[] = [];
    const nowPerson: number[] = [];
    for (const r of rows) {
      const at = Number(r.click_timestamp);
      const bot = parseUserAgent((r.user_agent as string | null) ?? undefined).is_bot;
      if (bot !== bool(r.is_bot)) (bot ? nowBot : nowPerson).push(Number(r.id));
      const event = { programId: Number(r.program_id), partnerId: num(r.partner_id), linkId: num(r.link_id), currency: '', at };
      report.clicks++;
      if (bot) {
        report.bots++;
        set.add({ ...event, dims: null, counters: { bot_clicks: 1 } });
        continue;
      }
      // A click's address is not stored: the rebuild knows a returning visitor by click id only.
      const first = event.linkId === null || unique.countOnce(event.linkId, [{ clickId: String(r.click_id) }], at);
      set.add({ ...event, dims: clickDimensions(r as unknown as ClickFacts), counters: { clicks: 1, unique_clicks: first ? 1 : 0 } });
    }
    if (nowBot.length > 0) await db('click_events').whereIn('id', nowBot).update({ is_bot: true });
    if (nowPerson.length > 0) await db('click_events').whereIn('id', nowPerson).update({ is_bot: false });
    report.bot_flags_changed += nowBot.length + nowPerson.length;
    await upsertRollups(db, set, SETTLED);
    const last = rows[rows.length - 1];
    after = { at: Number(last.click_timestamp), id: Number(last.id) };
  }
}

/** The attributed click's facts of each row's customer (its first click), joined in. */
function withAttributedClick(db: Knex, q: Knex.QueryBuilder, customerAlias: string): Knex.QueryBuilder {
  return q
    // The first click's event, found by the listing index (program, test flag, time) as
    // db/stats-rollups.ts does: click_events.click_id has no index.
    .leftJoin('click_events as ce', 'ce.id', db.raw(`(select min(x.id) from click_events x where x.program_id = ${customerAlias}.program_id and x.is_test = ${customerAlias}.is_test and x.click_timestamp = ${customerAlias}.click_at and x.click_id = ${customerAlias}.click_id)`))
    .select('ce.link_id', 'ce.page_url', 'ce.referrer_url', 'ce.geo_country', 'ce.device_type', 'ce.browser_name');
}

/** Leads (settled, at settlement), sales (at their date) and refunds (at their recording), in id order. */
async function rebuildConversions(db: Knex, kind: 'leads' | 'sales' | 'refunds', report: RebuildReport): Promise<void> {
  let afterId = 0;
  for (;;) {
    let q: Knex.QueryBuilder;
    if (kind === 'leads') {
      q = db('lead_events as e').join('customers as c', 'c.id', 'e.customer_id').where({ 'e.is_test': false, 'e.provisional': false }).select('e.id', 'e.program_id', 'c.partner_id', db.raw('coalesce(e.settled_at, e.lead_timestamp) as at'));
    } else if (kind === 'sales') {
      q = db('sale_events as e').join('customers as c', 'c.id', 'e.customer_id').where('e.is_test', false).select('e.id', 'e.program_id', 'c.partner_id', 'e.sale_date as at', 'e.currency', 'e.amount_cents');
    } else {
      q = db('refunds as e').join('sale_events as s', 's.id', 'e.sale_id').join('customers as c', 'c.id', 's.customer_id').where('s.is_test', false).select('e.id', 's.program_id', 'c.partner_id', 'e.created_at as at', 's.currency', 'e.amount_cents');
    }
    const rows: Row[] = await withAttributedClick(db, q.where('e.id', '>', afterId).orderBy('e.id').limit(CHUNK), 'c');
    if (rows.length === 0) return;
    const set = new RollupSet();
    for (const r of rows) {
      const counters: Counters = kind === 'leads' ? { leads: 1 } : kind === 'sales' ? { sales: 1, revenue_cents: Number(r.amount_cents) } : { refunds: 1, refunded_cents: Number(r.amount_cents) };
      set.add({ programId: Number(r.program_id), partnerId: num(r.partner_id), linkId: num(r.link_id), dims: clickDimensions(r as unknown as ClickFacts), currency: kind === 'leads' ? '' : String(r.currency), at: Number(r.at), counters });
      report[kind]++;
    }
    await upsertRollups(db, set, SETTLED);
    afterId = Number(rows[rows.length - 1].id);
  }
}

/**
 * Moves the stats consumers' cursors (jobs/stats-clicks.ts, jobs/stats-conversions.ts) to the
 * outbox's end: every click, lead, sale and refund committed so far is counted by this rebuild from
 * the raw tables, and must not be counted again from its event.
 */
async function skipCountedEvents(trx: Knex.Transaction): Promise<void> {
  const tail = await outboxTail(trx);
  const now = Date.now();
  await trx('outbox_cursors')
    .insert([STATS_CLICKS_CONSUMER, STATS_CONVERSIONS_CONSUMER].map((consumer) => ({ consumer, last_txid: tail?.txid ?? 0, last_id: tail?.id ?? 0, updated_at: now, pass_last_txid: null, pass_last_id: null, pass_parts_done: 0, pass_digest: null })))
    .onConflict('consumer')
    .merge();
}

/** Deletes every rollup row and adds every real event back, in one transaction. */
export async function rebuildStats(db: Knex, uniqueWindowMs: number): Promise<RebuildReport> {
  const report: RebuildReport = { clicks: 0, bots: 0, bot_flags_changed: 0, leads: 0, sales: 0, refunds: 0 };
  await db.transaction(async (trx) => {
    await skipCountedEvents(trx);
    await trx(SETTLED).del();
    await trx(RECENT).del();
    await rebuildClicks(trx, uniqueWindowMs, report);
    for (const kind of ['leads', 'sales', 'refunds'] as const) await rebuildConversions(trx, kind, report);
  });
  return report;
}
