/**
 * GET /api/tracking/events/:programId — spec 4.6 and 2.5. Each type is read newest-first, capped at
 * 3 x pageSize rows, merged, sorted and paginated; `total` is the size of the merged set, so pages
 * beyond it are empty even when older events exist (narrow the dates to reach them).
 */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { ERRORS, LIMITS, type ClickEvent, type ConversionEvent, type EventType, type LeadEvent, type NormalizedEvent, type SaleRefundStatus } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { bool } from '../../db/knex.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { parseEventsQuery, type EventsQuery } from './events-query.js';

// Knex rows are untyped; each reader maps its row into a typed event right away.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Row = Record<string, any>;

const iso = (ms: unknown): string => new Date(Number(ms)).toISOString();
const partnerOf = (r: Row): NormalizedEvent['partner'] => (r.partner_id == null ? null : { id: Number(r.partner_id), code: String(r.partner_code) });

function refundStatus(amount: number, refunded: number, chargebacks: number): SaleRefundStatus {
  if (chargebacks > 0) return 'charged_back';
  if (refunded <= 0) return 'none';
  return refunded >= amount ? 'refunded' : 'partially_refunded';
}
const orNull = <T>(v: T | undefined | null): T | null => (v === undefined ? null : v);

interface Sortable {
  at: number;
  rank: number;
  event: NormalizedEvent;
}

function bounded(q: Knex.QueryBuilder, column: string, query: EventsQuery): Knex.QueryBuilder {
  if (query.from !== undefined) q.where(column, '>=', query.from);
  if (query.to !== undefined) q.where(column, '<=', query.to);
  return q;
}

async function clicks(db: Knex, programId: number, query: EventsQuery, cap: number): Promise<Sortable[]> {
  const base = db('click_events as e').where({ 'e.program_id': programId, 'e.is_test': false });
  if (query.bots !== 'include') base.where('e.is_bot', query.bots === 'only');
  const rows: Row[] = await bounded(base, 'e.click_timestamp', query)
    .orderBy([{ column: 'e.click_timestamp', order: 'desc' }, { column: 'e.id', order: 'desc' }])
    .limit(cap)
    .leftJoin('customers as c', 'c.click_id', 'e.click_id')
    .leftJoin('partners as pa', 'pa.id', 'e.partner_id')
    .select('e.partner_id', 'pa.code as partner_code', 'e.id', 'e.click_id', 'e.session_id', 'e.page_url', 'e.referrer_url', 'e.geo_country', 'e.geo_region', 'e.geo_city', 'e.device_type', 'e.device_os', 'e.browser_name', 'e.click_timestamp', 'e.created_at', 'c.status', 'c.converted_at');
  return rows.map((r) => {
    const event: ClickEvent = {
      id: Number(r.id),
      event_type: 'click',
      timestamp: iso(r.click_timestamp),
      click_id: r.click_id,
      createdAt: iso(r.created_at),
      session_id: orNull(r.session_id),
      page_url: orNull(r.page_url),
      referrer_url: orNull(r.referrer_url),
      geo_country: orNull(r.geo_country),
      geo_region: orNull(r.geo_region),
      geo_city: orNull(r.geo_city),
      device_type: orNull(r.device_type),
      device_os: orNull(r.device_os),
      browser_name: orNull(r.browser_name),
      // A click converts when its visitor signs up (or buys).
      converted: r.status === 'lead' || r.converted_at != null,
      partner: partnerOf(r),
    };
    return { at: Number(r.click_timestamp), rank: 2, event };
  });
}

async function leads(db: Knex, programId: number, query: EventsQuery, cap: number): Promise<Sortable[]> {
  // Provisional leads are not counted (3.1); they appear once settled.
  const rows: Row[] = await bounded(db('lead_events as e').where({ 'e.program_id': programId, 'e.is_test': false, 'e.provisional': false }), 'e.lead_timestamp', query)
    .orderBy([{ column: 'e.lead_timestamp', order: 'desc' }, { column: 'e.id', order: 'desc' }])
    .limit(cap)
    .leftJoin('customers as c', 'c.id', 'e.customer_id')
    .leftJoin('partners as pa', 'pa.id', 'c.partner_id')
    .select('c.partner_id', 'pa.code as partner_code', 'e.id', 'e.click_id', 'e.customer_key', 'e.session_id', 'e.page_url', 'e.lead_timestamp', 'e.created_at', 'c.converted_at');
  return rows.map((r) => {
    const event: LeadEvent = {
      id: Number(r.id),
      event_type: 'lead',
      timestamp: iso(r.lead_timestamp),
      click_id: orNull(r.click_id),
      createdAt: iso(r.created_at),
      customer_key: orNull(r.customer_key),
      session_id: orNull(r.session_id),
      page_url: orNull(r.page_url),
      // A lead converts with its customer's first attributed sale.
      converted: r.converted_at != null,
      partner: partnerOf(r),
    };
    return { at: Number(r.lead_timestamp), rank: 1, event };
  });
}

/** Per sale: the amount refunded and how many chargebacks (refunds of both kinds are rows of `refunds`). */
const refundTotals = (db: Knex, programId: number) =>
  db('refunds')
    .where({ program_id: programId })
    .select('sale_id')
    .sum({ refunded: 'amount_cents' })
    .sum({ chargebacks: db.raw("case when reason = 'chargeback' then 1 else 0 end") })
    .groupBy('sale_id')
    .as('rf');

async function conversions(db: Knex, programId: number, query: EventsQuery, cap: number): Promise<Sortable[]> {
  const rows: Row[] = await bounded(db('sale_events as e').where({ 'e.program_id': programId, 'e.is_test': false }), 'e.sale_date', query)
    .orderBy([{ column: 'e.sale_date', order: 'desc' }, { column: 'e.id', order: 'desc' }])
    .limit(cap)
    .leftJoin('customers as c', 'c.id', 'e.customer_id')
    .leftJoin('partners as pa', 'pa.id', 'c.partner_id')
    .leftJoin(refundTotals(db, programId), 'rf.sale_id', 'e.id')
    .select('c.partner_id', 'pa.code as partner_code', 'rf.refunded', 'rf.chargebacks', 'e.id', 'e.click_id', 'e.amount_cents', 'e.currency', 'e.sale_type', 'e.payment_status', 'e.processor_event_id', 'e.is_recurring', 'e.sale_date', 'e.created_at');
  return rows.map((r) => {
    const event: ConversionEvent = {
      id: Number(r.id),
      event_type: 'conversion',
      timestamp: iso(r.sale_date),
      click_id: orNull(r.click_id),
      createdAt: iso(r.created_at),
      amount_cents: Number(r.amount_cents),
      currency: r.currency,
      sale_type: orNull(r.sale_type),
      payment_status: orNull(r.payment_status),
      processor_event_id: r.processor_event_id,
      is_recurring: bool(r.is_recurring),
      partner: partnerOf(r),
      refund_status: refundStatus(Number(r.amount_cents), Number(r.refunded ?? 0), Number(r.chargebacks ?? 0)),
      refunded_amount_cents: Number(r.refunded ?? 0),
    };
    return { at: Number(r.sale_date), rank: 0, event };
  });
}

const READERS: Record<EventType, typeof clicks> = { click: clicks, lead: leads, conversion: conversions };

export async function listEvents(db: Knex, programId: number, query: EventsQuery) {
  const cap = LIMITS.eventListingWindowMultiplier * query.pageSize;
  // Only bots' clicks: leads and sales are people's, so none of them are listed.
  const types = query.bots === 'only' ? query.types.filter((t) => t === 'click') : query.types;
  const parts = await Promise.all(types.map((type) => READERS[type](db, programId, query, cap)));
  // Newest first; at the same instant a sale comes before its lead and a lead before its click.
  const merged = parts.flat().sort((a, b) => b.at - a.at || a.rank - b.rank || b.event.id - a.event.id);
  const total = merged.length;
  const start = (query.page - 1) * query.pageSize;
  return {
    data: merged.slice(start, start + query.pageSize).map((s) => s.event),
    meta: { pagination: { page: query.page, pageSize: query.pageSize, pageCount: Math.ceil(total / query.pageSize), total } },
  };
}

export function trackingEvents(deps: AppDeps) {
  return async function handleEvents(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.programId, ERRORS.programIdInvalid);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'tracking:list');
    const query = parseEventsQuery(ctx.query);
    ctx.body = await listEvents(deps.db, programId, query);
  };
}
