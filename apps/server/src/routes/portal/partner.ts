/**
 * /api/portal/partners/:id… — what a partner sees of one of their partner records: the programs'
 * terms, their links with clicks, leads and sales, commissions by status and currency, payouts,
 * and their payout details. Only partner records bound to the signed-in person answer; any other
 * id answers 404, the same as one that does not exist. Customers are never named: no e-mail
 * addresses, customer keys or click ids leave these routes.
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { APPLICATION_LIMITS, ERRORS, type PayoutDetailsView, type PortalLinkDaily, type PortalOverview, type StatsResponse } from '@reftrack/contract';

const DAY = 86_400_000;
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { parseId } from '../../auth/workspace-access.js';
import { ownPartner } from '../../auth/portal-partner.js';
import { parsePayoutDetails, savePayoutDetails, viewPayoutDetails } from '../../domain/payout-details.js';
import { shareUrl } from '../../domain/links.js';
import { payoutCsvLines } from '../../domain/payout-files.js';
import { readPayoutDetails } from '../../domain/payout-details.js';
import { readPayouts } from '../../domain/payouts.js';
import { parseStatsQuery } from '../../domain/stats-query.js';
import { statsReport } from '../../domain/stats.js';

const count = (rows: Array<Record<string, unknown>>): Map<number, number> => new Map(rows.map((r) => [Number(r.link_id), Number(r.n)]));

export function portalOverview(deps: AppDeps) {
  return async function handleOverview(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    const db = deps.db;
    const partner = await db('partners').where({ id: partnerId }).first('id', 'name', 'code');
    const programs = await db('partner_programs as pp')
      .join('programs as pr', 'pr.id', 'pp.program_id')
      .where('pp.partner_id', partnerId)
      .orderBy('pr.id')
      .select('pr.id', 'pr.name', 'pr.domain', 'pr.commission_type', 'pr.commission_rate', 'pr.attribution_window_days', 'pr.commission_hold_days', 'pr.payout_minimum');
    const links = await db('referral_links as l').leftJoin('programs as pr', 'pr.id', 'l.program_id').where('l.partner_id', partnerId).orderBy('l.id').select('l.id', 'l.program_id', 'l.short_link', 'l.active', 'l.clicks', 'pr.domain');
    const linkIds = links.map((l) => Number(l.id));
    const leads = count(await db('lead_events as e').join('customers as c', 'c.id', 'e.customer_id').whereIn('c.link_id', linkIds).where('e.is_test', false).groupBy('c.link_id').select('c.link_id').count({ n: '*' }));
    const sales = count(await db('sale_events as e').join('customers as c', 'c.id', 'e.customer_id').whereIn('c.link_id', linkIds).where('e.is_test', false).groupBy('c.link_id').select('c.link_id').count({ n: '*' }));
    const commissions: Array<Record<string, unknown>> = await db('commissions').where({ partner_id: partnerId }).groupBy('status', 'currency').orderBy(['currency', 'status']).select('status', 'currency').count({ n: '*' }).sum({ total: 'amount_cents' });
    const payouts = await db('payouts').where({ partner_id: partnerId }).orderBy('created_at', 'desc').limit(100).select('id', 'program_id', 'reference', 'currency', 'amount_cents', 'method', 'status', 'created_at');
    const requestsOpen = new Set((await db('program_portal_settings').whereIn('program_id', programs.map((p) => Number(p.id))).where({ link_requests_open: true }).pluck('program_id')).map(Number));
    const csv = await payoutCsvLines(
      await readPayouts(db, { partnerId }, 100),
      (await readPayoutDetails(db, deps.secrets, [partnerId])).get(partnerId),
      new Map(programs.map((p) => [Number(p.id), String(p.name)])),
    );
    const data: PortalOverview = {
      partner: { id: Number(partner.id), name: partner.name, code: partner.code },
      terms: programs.map((p) => ({
        program_id: Number(p.id), program_name: p.name, domain: p.domain ?? null, commission_type: p.commission_type, commission_rate: Number(p.commission_rate),
        cookie_window_days: Number(p.attribution_window_days), hold_days: Number(p.commission_hold_days), payout_minimum: Number(p.payout_minimum),
        link_requests_open: requestsOpen.has(Number(p.id)),
      })),
      links: links.map((l) => ({
        id: Number(l.id), program_id: Number(l.program_id), short_link: l.short_link, url: shareUrl(deps, Number(l.program_id), l.short_link, l.domain ?? null) ?? `?aff=${encodeURIComponent(l.short_link)}`,
        active: Boolean(l.active), clicks: Number(l.clicks), leads: leads.get(Number(l.id)) ?? 0, sales: sales.get(Number(l.id)) ?? 0,
      })),
      // Never summed across currencies: one row per status and currency.
      commissions: commissions.map((c) => ({ status: c.status as PortalOverview['commissions'][number]['status'], currency: String(c.currency), count: Number(c.n), amount_cents: Number(c.total) })),
      payouts: payouts.map((p) => ({
        id: Number(p.id), program_id: Number(p.program_id), reference: p.reference, currency: p.currency, amount_cents: Number(p.amount_cents), method: p.method, status: p.status,
        created_at: new Date(Number(p.created_at)).toISOString(),
        csv_line: csv.get(Number(p.id)) ?? null,
      })),
    };
    ctx.body = { success: true, data };
  };
}

export function portalGetPayoutDetails(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    ctx.body = { success: true, data: (await viewPayoutDetails(deps.db, deps.secrets, partnerId)) satisfies PayoutDetailsView | null };
  };
}

export function portalPutPayoutDetails(deps: AppDeps) {
  return async function handlePut(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    const details = parsePayoutDetails(readBody(ctx));
    ctx.body = { success: true, data: await savePayoutDetails(deps.db, deps.secrets, partnerId, details, deps.now()) };
  };
}

/** One link's clicks, leads and sales per UTC day over the last APPLICATION_LIMITS.dailyDays days (test traffic excluded). */
export function portalLinkDaily(deps: AppDeps) {
  return async function handleDaily(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    const linkId = parseId(ctx.params.linkId, ERRORS.linkNotFound);
    const link = await deps.db('referral_links').where({ id: linkId, partner_id: partnerId }).first('id');
    if (!link) fail(ERRORS.linkNotFound);
    const today = Math.floor(deps.now() / DAY);
    const first = today - APPLICATION_LIMITS.dailyDays + 1;
    const from = first * DAY;
    const db = deps.db;
    // Integer division by a day's milliseconds gives the UTC day on both engines (bigint / bigint).
    const perDay = async (q: Knex.QueryBuilder, column: string): Promise<Map<number, number>> => {
      const rows = (await q.where(column, '>=', from).groupByRaw(`${column} / ${DAY}`).select(db.raw(`${column} / ${DAY} as day`)).count({ n: '*' })) as Array<Record<string, unknown>>;
      return new Map(rows.map((r) => [Number(r.day), Number(r.n)]));
    };
    const clicks = await perDay(db('click_events').where({ link_id: linkId, is_test: false, is_bot: false }), 'click_timestamp');
    const leads = await perDay(db('lead_events as e').join('customers as c', 'c.id', 'e.customer_id').where({ 'c.link_id': linkId, 'e.is_test': false }), 'e.lead_timestamp');
    const sales = await perDay(db('sale_events as e').join('customers as c', 'c.id', 'e.customer_id').where({ 'c.link_id': linkId, 'e.is_test': false }), 'e.sale_date');
    const days = Array.from({ length: APPLICATION_LIMITS.dailyDays }, (_, i) => first + i);
    const data: PortalLinkDaily = {
      link_id: linkId,
      days: days.map((d) => new Date(d * DAY).toISOString().slice(0, 10)),
      clicks: days.map((d) => clicks.get(d) ?? 0),
      leads: days.map((d) => leads.get(d) ?? 0),
      sales: days.map((d) => sales.get(d) ?? 0),
    };
    ctx.body = { success: true, data };
  };
}

/**
 * GET /api/portal/partners/:id/stats?program_id=… — the partner's own stats in one of their
 * programs (docs/analytics.md): the partner filter is fixed to this partner, so a series of their
 * clicks, leads and sales, and a breakdown by their links. Dimension breakdowns are rolled up per
 * program only, so the portal does not offer them.
 */
export function portalStats(deps: AppDeps) {
  return async function handleStats(ctx: Context): Promise<void> {
    const partnerId = await ownPartner(deps.db, ctx);
    const raw = ctx.query.program_id;
    const programQuery = deps.db('partner_programs').where({ partner_id: partnerId });
    if (raw !== undefined) {
      const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
      if (!/^\d{1,9}$/.test(value)) fail(ERRORS.portalStatsProgramInvalid);
      programQuery.where({ program_id: Number(value) });
    }
    const enrollment = await programQuery.orderBy('program_id').first('program_id');
    if (!enrollment) fail(ERRORS.portalStatsProgramInvalid);
    const { partner_id: _ignored, ...rest } = ctx.query;
    void _ignored;
    const groupBy = ctx.query.group_by;
    if (groupBy !== undefined && groupBy !== 'link') fail(ERRORS.portalStatsGroupByInvalid);
    const query = parseStatsQuery({ ...rest, partner_id: String(partnerId) }, deps.now());
    ctx.body = { success: true, data: await statsReport(deps.db, Number(enrollment.program_id), query) } satisfies StatsResponse;
  };
}
