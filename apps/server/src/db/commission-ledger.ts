/**
 * Reading the commission ledger and the partners' balances (docs/commissions.md). Amounts are
 * summed per partner and currency only — never across currencies.
 */
import type { Knex } from 'knex';
import type { CommissionReviewReason, CommissionStatus, Currency, LedgerCommission, LedgerResponse, PartnerBalance, PartnerEarnings } from '@reftrack/contract';

const iso = (ms: unknown): string => new Date(Number(ms)).toISOString();

export interface LedgerFilter {
  programId: number;
  partnerId?: number;
  status?: CommissionStatus;
  currency?: Currency;
  /** created_at bounds, unix ms, inclusive */
  from?: number;
  to?: number;
  /** Rows with an id below this (the previous page's last id). */
  beforeId?: number;
}

/** Newest first, `limit` rows. */
export async function readLedger(db: Knex, filter: LedgerFilter, limit: number): Promise<LedgerCommission[]> {
  const adjustments = db('commission_adjustments').select('commission_id').sum({ total: 'amount_cents' }).groupBy('commission_id').as('adj');
  const refunds = db('refunds').select('sale_id').sum({ total: 'amount_cents' }).groupBy('sale_id').as('ref');
  const rows = await db('commissions as c')
    .join('sale_events as s', 's.id', 'c.sale_id')
    .join('partners as pa', 'pa.id', 'c.partner_id')
    .leftJoin('customers as cu', 'cu.id', 'c.customer_id')
    .leftJoin(adjustments, 'adj.commission_id', 'c.id')
    .leftJoin(refunds, 'ref.sale_id', 'c.sale_id')
    .where('c.program_id', filter.programId)
    .modify((q) => {
      if (filter.partnerId !== undefined) q.where('c.partner_id', filter.partnerId);
      if (filter.status !== undefined) q.where('c.status', filter.status);
      if (filter.currency !== undefined) q.where('c.currency', filter.currency);
      if (filter.from !== undefined) q.where('c.created_at', '>=', filter.from);
      if (filter.to !== undefined) q.where('c.created_at', '<=', filter.to);
      if (filter.beforeId !== undefined) q.where('c.id', '<', filter.beforeId);
    })
    .orderBy('c.id', 'desc')
    .limit(limit)
    .select(
      'c.*',
      's.processor_event_id',
      's.amount_cents as sale_amount_cents',
      'cu.customer_key',
      'pa.code as partner_code',
      'pa.name as partner_name',
      'adj.total as adjustments_total',
      'ref.total as refunded_total',
    );
  return (rows as Array<Record<string, any>>).map( // eslint-disable-line @typescript-eslint/no-explicit-any -- database rows
    (r): LedgerCommission => ({
      id: Number(r.id),
      program_id: Number(r.program_id),
      sale_id: Number(r.sale_id),
      transaction_id: String(r.processor_event_id),
      customer_key: r.customer_key ?? null,
      partner: { id: Number(r.partner_id), code: r.partner_code, name: r.partner_name },
      amount_cents: Number(r.amount_cents),
      adjustments_cents: Number(r.adjustments_total ?? 0),
      currency: r.currency as Currency,
      status: r.status as CommissionStatus,
      status_reason: r.status_reason ?? null,
      review_reasons: r.review_reasons ? (String(r.review_reasons).split(' ') as CommissionReviewReason[]) : [],
      hold_until: r.hold_until == null ? null : iso(r.hold_until),
      payout_id: r.payout_id == null ? null : Number(r.payout_id),
      sale_amount_cents: Number(r.sale_amount_cents),
      refunded_amount_cents: Number(r.refunded_total ?? 0),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  );
}

/** One page of the ledger and the cursor of the next (null on the last page). */
export async function readLedgerPage(db: Knex, filter: LedgerFilter, limit: number): Promise<LedgerResponse> {
  const rows = await readLedger(db, filter, limit + 1);
  const page = rows.slice(0, limit);
  return { success: true, data: page, meta: { next_cursor: rows.length > limit ? String(page[page.length - 1].id) : null } };
}

/**
 * Every partner's balance in every currency they have commissions in. `paid` counts commissions
 * paid by a payout that did not fail (a failure clears `payout_id`), whatever happened to them
 * since; claw-backs are the adjustments (negative after a refund, positive when a failed payout
 * cancels one), open while no payout has settled them.
 */
export async function readBalances(db: Knex, programId: number, partnerId?: number): Promise<PartnerBalance[]> {
  const byPartner = (q: Knex.QueryBuilder) => (partnerId === undefined ? q : q.where('c.partner_id', partnerId));
  const statusRows = await byPartner(db('commissions as c').where('c.program_id', programId).whereIn('c.status', ['pending', 'approved']))
    .groupBy('c.partner_id', 'c.currency', 'c.status')
    .select('c.partner_id', 'c.currency', 'c.status')
    .sum({ total: 'c.amount_cents' });
  const paidRows = await byPartner(db('commissions as c').where('c.program_id', programId).whereNotNull('c.payout_id'))
    .groupBy('c.partner_id', 'c.currency')
    .select('c.partner_id', 'c.currency')
    .sum({ total: 'c.amount_cents' });
  const adjustmentRows = await byPartner(db('commission_adjustments as a').join('commissions as c', 'c.id', 'a.commission_id').where('c.program_id', programId))
    .groupBy('c.partner_id', 'c.currency')
    .select('c.partner_id', 'c.currency')
    .sum({ total: 'a.amount_cents' })
    .sum({ open: db.raw('case when a.payout_id is null then a.amount_cents else 0 end') });
  const balances = new Map<string, PartnerBalance>();
  const entry = (partner: unknown, currency: unknown): PartnerBalance => {
    const key = `${partner}:${currency}`;
    let b = balances.get(key);
    if (!b) {
      b = { partner: { id: Number(partner), code: '', name: '' }, currency: currency as Currency, pending_cents: 0, approved_cents: 0, paid_cents: 0, clawed_back_cents: 0, open_clawback_cents: 0, payable_cents: 0 };
      balances.set(key, b);
    }
    return b;
  };
  for (const r of statusRows) {
    const b = entry(r.partner_id, r.currency);
    if (r.status === 'pending') b.pending_cents = Number(r.total);
    else b.approved_cents = Number(r.total);
  }
  for (const r of paidRows) entry(r.partner_id, r.currency).paid_cents = Number(r.total);
  for (const r of adjustmentRows) {
    const b = entry(r.partner_id, r.currency);
    b.clawed_back_cents = -Number(r.total);
    b.open_clawback_cents = -Number(r.open);
  }
  const list = [...balances.values()];
  const ids = [...new Set(list.map((b) => b.partner.id))];
  const partners = ids.length === 0 ? [] : await db('partners').whereIn('id', ids).select('id', 'code', 'name');
  const byId = new Map(partners.map((p) => [Number(p.id), p]));
  for (const b of list) {
    const p = byId.get(b.partner.id);
    b.partner = { id: b.partner.id, code: p?.code ?? '', name: p?.name ?? '' };
    b.payable_cents = b.approved_cents - b.open_clawback_cents;
  }
  return list.sort((a, b) => a.partner.code.localeCompare(b.partner.code) || a.currency.localeCompare(b.currency));
}

/**
 * Each partner's results per currency in a program: real sales, revenue net of refunds, and
 * commissions owed or paid net of claw-backs. Keyed by partner id.
 */
export async function readPartnerEarnings(db: Knex, programId: number): Promise<Map<number, PartnerEarnings[]>> {
  const refunds = db('refunds').where({ program_id: programId }).select('sale_id').sum({ refunded: 'amount_cents' }).groupBy('sale_id').as('rf');
  const sales = (await db('sale_events as s')
    .join('customers as c', 'c.id', 's.customer_id')
    .leftJoin(refunds, 'rf.sale_id', 's.id')
    .where({ 's.program_id': programId, 's.is_test': false })
    .whereNotNull('c.partner_id')
    .groupBy('c.partner_id', 's.currency')
    .select('c.partner_id', 's.currency')
    .count({ sales: '*' })
    .sum({ gross: 's.amount_cents' })
    .sum({ refunded: db.raw('coalesce(rf.refunded, 0)') })) as Array<Record<string, unknown>>;
  const adjustments = db('commission_adjustments').select('commission_id').sum({ total: 'amount_cents' }).groupBy('commission_id').as('adj');
  const commissions = (await db('commissions as c')
    .leftJoin(adjustments, 'adj.commission_id', 'c.id')
    .where('c.program_id', programId)
    .where((q) => q.whereIn('c.status', ['pending', 'approved', 'paid']).orWhereNotNull('c.payout_id'))
    .groupBy('c.partner_id', 'c.currency')
    .select('c.partner_id', 'c.currency')
    .sum({ owed: db.raw('c.amount_cents + coalesce(adj.total, 0)') })) as Array<Record<string, unknown>>;
  const out = new Map<number, PartnerEarnings[]>();
  const entry = (partner: unknown, currency: unknown): PartnerEarnings => {
    const list = out.get(Number(partner)) ?? [];
    out.set(Number(partner), list);
    let e = list.find((x) => x.currency === currency);
    if (!e) {
      e = { currency: currency as Currency, sales: 0, revenue_cents: 0, commissions_cents: 0 };
      list.push(e);
    }
    return e;
  };
  for (const r of sales) {
    const e = entry(r.partner_id, r.currency);
    e.sales = Number(r.sales);
    e.revenue_cents = Number(r.gross) - Number(r.refunded);
  }
  for (const r of commissions) entry(r.partner_id, r.currency).commissions_cents = Number(r.owed);
  for (const list of out.values()) list.sort((a, b) => a.currency.localeCompare(b.currency));
  return out;
}
