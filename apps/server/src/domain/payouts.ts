/**
 * Payouts (docs/commissions.md, "Payouts" and "Claw-back"): paying a partner's approved balance in
 * one currency, and what a payout's status does to its commissions.
 *
 * - A payout pays every approved commission of one partner, program and currency, net of the
 *   claw-backs not yet settled (refunds after an earlier payout: negative adjustments). Its
 *   commissions become `paid` and those adjustments are marked settled by it, in the transaction
 *   that creates it, so no commission or claw-back is ever in two payouts.
 * - On PostgreSQL the commissions are claimed `FOR UPDATE`: a refund of one of them at the same
 *   moment waits and then claws back the paid commission (domain/refund.ts locks the same row).
 * - A payout can be marked `sent`, or `failed` (from created or sent). A failed payout returns its
 *   paid commissions to `approved`, releases the claw-backs it settled, and cancels the claw-backs
 *   of its commissions that were refunded after it: the partner was never paid them.
 */
import type { Knex } from 'knex';
import {
  CURRENCY_MINOR_UNITS,
  ERRORS,
  type CommissionStatus,
  type Currency,
  type EventActor,
  type PartnerRef,
  type PayoutBatchResponse,
  type PayoutMethod,
  type PayoutObject,
  type PayoutStatus,
} from '@reftrack/contract';
import { fail } from '../api-error.js';
import { insertId } from '../db/insert-id.js';
import { isSqlite, isUniqueViolation } from '../db/knex.js';
import { appendEvents, type NewEvent } from '../db/outbox.js';
import { inSavepoint } from '../db/savepoint.js';
import { commissionObject } from './event-objects.js';
import { inLists } from '../db/in-lists.js';

const iso = (ms: unknown): string => new Date(Number(ms)).toISOString();

/** The statuses an owner may set, from each status. */
const NEXT: Record<PayoutStatus, readonly PayoutStatus[]> = {
  created: ['sent', 'failed'],
  sent: ['failed'],
  failed: [],
};

export interface PayoutRequest {
  programId: number;
  partnerId: number;
  currency: Currency;
  method: PayoutMethod;
  reference: string | null;
  note: string | null;
  batchId?: number | null;
  /** Batches pay only balances at or above the program's minimum (minor units); a single payout any positive one. */
  minimumMinor?: number;
}

/** What `partner` would be paid in `currency` now: the approved commissions and the open claw-backs. */
interface Payable {
  commissions: Array<{ id: number; amount: number }>;
  adjustments: Array<{ id: number; amount: number }>;
  commissionsCents: number;
  adjustmentsCents: number;
}

async function claimPayable(trx: Knex.Transaction, programId: number, partnerId: number, currency: Currency): Promise<Payable> {
  const commissionQuery = trx('commissions').where({ program_id: programId, partner_id: partnerId, currency, status: 'approved' }).orderBy('id').select('id', 'amount_cents');
  const commissions = isSqlite(trx) ? await commissionQuery : await commissionQuery.forUpdate();
  const adjustmentQuery = trx('commission_adjustments as a')
    .join('commissions as c', 'c.id', 'a.commission_id')
    .where({ 'c.program_id': programId, 'c.partner_id': partnerId, 'c.currency': currency })
    .whereNull('a.payout_id')
    .orderBy('a.id')
    .select('a.id', 'a.amount_cents');
  const adjustments = isSqlite(trx) ? await adjustmentQuery : await adjustmentQuery.forUpdate('a');
  const toRows = (rows: Array<{ id: unknown; amount_cents: unknown }>) => rows.map((r) => ({ id: Number(r.id), amount: Number(r.amount_cents) }));
  const c = toRows(commissions);
  const a = toRows(adjustments);
  return { commissions: c, adjustments: a, commissionsCents: c.reduce((n, r) => n + r.amount, 0), adjustmentsCents: a.reduce((n, r) => n + r.amount, 0) };
}

/** Minor units as the currency writes them (1234 USD → "12.34", 500 JPY → "500"). */
export function majorUnits(minor: number, currency: Currency): string {
  const factor = CURRENCY_MINOR_UNITS[currency];
  const decimals = Math.round(Math.log10(factor));
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  if (decimals === 0) return `${sign}${abs}`;
  return `${sign}${Math.floor(abs / factor)}.${String(abs % factor).padStart(decimals, '0')}`;
}

/** Thrown (and turned into a 409 or a batch's `skipped` entry) when a balance cannot be paid. */
export class NotPayable extends Error {
  constructor(
    readonly reason: 'nothing_payable' | 'below_minimum',
    readonly payableCents: number,
  ) {
    super(reason);
  }
}

/**
 * Creates one payout in the caller's transaction, with its events: `payout.created`, and
 * `commission.updated` (approved → paid) for each commission it pays.
 */
export async function createPayout(trx: Knex.Transaction, request: PayoutRequest, actor: EventActor, now: number): Promise<PayoutObject> {
  const { programId, partnerId, currency } = request;
  const payable = await claimPayable(trx, programId, partnerId, currency);
  const amount = payable.commissionsCents + payable.adjustmentsCents;
  if (payable.commissions.length === 0 || amount <= 0) throw new NotPayable('nothing_payable', amount);
  if (request.minimumMinor !== undefined && amount < request.minimumMinor) throw new NotPayable('below_minimum', amount);
  const row = {
    program_id: programId,
    partner_id: partnerId,
    batch_id: request.batchId ?? null,
    currency,
    amount_cents: amount,
    commissions_cents: payable.commissionsCents,
    adjustments_cents: payable.adjustmentsCents,
    commission_count: payable.commissions.length,
    method: request.method,
    // A placeholder until the id is known: references are unique per program.
    reference: request.reference ?? `pending-${now}-${Math.random().toString(36).slice(2, 10)}`,
    status: 'created',
    note: request.note,
    created_at: now,
    updated_at: now,
  };
  let payoutId: number;
  try {
    payoutId = await inSavepoint(trx, (sp) => insertId(sp, 'payouts', row));
  } catch (err) {
    if (isUniqueViolation(err)) fail(ERRORS.payoutReferenceTaken);
    throw err;
  }
  if (request.reference === null) await trx('payouts').where({ id: payoutId }).update({ reference: `PO-${programId}-${payoutId}` });
  const commissionIds = payable.commissions.map((c) => c.id);
  for (const ids of inLists(commissionIds)) await trx('commissions').whereIn('id', ids).update({ status: 'paid', payout_id: payoutId, updated_at: now });
  for (const ids of inLists(payable.adjustments.map((a) => a.id))) await trx('commission_adjustments').whereIn('id', ids).update({ payout_id: payoutId });
  const payout = (await readPayouts(trx, { id: payoutId }))[0];
  const events: NewEvent[] = [{ type: 'payout.created', programId, data: { payout }, occurredAt: now, actor }];
  for (const ids of inLists(commissionIds)) {
    for (const c of await trx('commissions').whereIn('id', ids).orderBy('id').select()) {
      events.push({ type: 'commission.updated', programId, data: { commission: commissionObject(c), previous_status: 'approved' }, occurredAt: now, actor });
    }
  }
  await appendEvents(trx, events);
  return payout;
}

/**
 * A batch: a payout for every partner of the program whose payable balance in a currency (or in
 * `currency` only) reaches the program's minimum. The rest are listed as skipped, with why.
 */
export async function createPayoutBatch(
  trx: Knex.Transaction,
  programId: number,
  method: PayoutMethod,
  currency: Currency | null,
  actor: EventActor,
  now: number,
): Promise<PayoutBatchResponse['data']> {
  const program = await trx('programs').where({ id: programId }).first('payout_minimum');
  const candidates = await trx('commissions')
    .where({ program_id: programId, status: 'approved' })
    .modify((q) => (currency ? q.where({ currency }) : q))
    .distinct('partner_id', 'currency')
    .orderBy(['partner_id', 'currency']);
  const batchId = await insertId(trx, 'payout_batches', { program_id: programId, method, created_at: now });
  const payouts: PayoutObject[] = [];
  const skipped: PayoutBatchResponse['data']['skipped'] = [];
  for (const c of candidates) {
    const cur = c.currency as Currency;
    const minimumMinor = Number(program.payout_minimum) * CURRENCY_MINOR_UNITS[cur];
    try {
      payouts.push(await createPayout(trx, { programId, partnerId: Number(c.partner_id), currency: cur, method, reference: null, note: null, batchId, minimumMinor: Math.max(1, minimumMinor) }, actor, now));
    } catch (err) {
      if (!(err instanceof NotPayable)) throw err;
      skipped.push({ partner: await partnerRef(trx, Number(c.partner_id)), currency: cur, payable_cents: err.payableCents, reason: err.reason });
    }
  }
  if (payouts.length === 0) fail(ERRORS.payoutBatchEmpty);
  return { batch_id: batchId, payouts, skipped };
}

/** Marks a payout sent or failed; a failure hands its commissions and claw-backs back (see above). */
export async function changePayoutStatus(trx: Knex.Transaction, payoutId: number, programIds: readonly number[], to: PayoutStatus, note: string | null, actor: EventActor, now: number): Promise<PayoutObject> {
  const query = trx('payouts').where({ id: payoutId }).whereIn('program_id', programIds).first('id', 'program_id', 'status');
  const current = isSqlite(trx) ? await query : await query.forUpdate();
  if (!current) fail(ERRORS.payoutNotFound);
  const from = current.status as PayoutStatus;
  if (!NEXT[from].includes(to)) fail(ERRORS.payoutTransitionInvalid, { from, to });
  const programId = Number(current.program_id);
  const events: NewEvent[] = [];
  await trx('payouts').where({ id: payoutId }).update({ status: to, updated_at: now, ...(note !== null ? { note } : {}) });
  if (to === 'failed') {
    const paid = await trx('commissions').where({ payout_id: payoutId }).select('id', 'status');
    const backToApproved = paid.filter((c) => c.status === 'paid').map((c) => Number(c.id));
    const refundedSince = paid.filter((c) => c.status !== 'paid').map((c) => Number(c.id));
    for (const ids of inLists(backToApproved)) await trx('commissions').whereIn('id', ids).update({ status: 'approved', payout_id: null, updated_at: now });
    // Claw-backs of commissions refunded after this payout: the partner never got them, so each is cancelled by an equal positive adjustment.
    for (const ids of inLists(refundedSince)) {
      const sums = (await trx('commission_adjustments').whereIn('commission_id', ids).groupBy('commission_id').select('commission_id').sum({ total: 'amount_cents' })) as Array<{ commission_id: number; total: unknown }>;
      const offsets = sums.filter((s) => Number(s.total) !== 0).map((s) => ({ commission_id: s.commission_id, amount_cents: -Number(s.total), reason: 'payout_failed', created_at: now }));
      if (offsets.length > 0) await trx('commission_adjustments').insert(offsets);
      await trx('commissions').whereIn('id', ids).update({ payout_id: null, updated_at: now });
    }
    // Claw-backs this payout settled are open again: the next payout deducts them.
    await trx('commission_adjustments').where({ payout_id: payoutId }).update({ payout_id: null });
    for (const ids of inLists(backToApproved)) {
      for (const c of await trx('commissions').whereIn('id', ids).orderBy('id').select()) {
        events.push({ type: 'commission.updated', programId, data: { commission: commissionObject(c), previous_status: 'paid' as CommissionStatus }, occurredAt: now, actor });
      }
    }
  }
  const payout = (await readPayouts(trx, { id: payoutId }))[0];
  events.unshift({ type: 'payout.updated', programId, data: { payout, previous_status: from }, occurredAt: now, actor });
  await appendEvents(trx, events);
  return payout;
}

export interface PayoutFilter {
  id?: number;
  programId?: number;
  batchId?: number;
  partnerId?: number;
  currency?: Currency;
  status?: PayoutStatus;
}

/** Payouts as the API shows them, newest first. */
export async function readPayouts(db: Knex, filter: PayoutFilter, limit = 500): Promise<PayoutObject[]> {
  const rows = await db('payouts as po')
    .join('partners as pa', 'pa.id', 'po.partner_id')
    .modify((q) => {
      if (filter.id !== undefined) q.where('po.id', filter.id);
      if (filter.programId !== undefined) q.where('po.program_id', filter.programId);
      if (filter.batchId !== undefined) q.where('po.batch_id', filter.batchId);
      if (filter.partnerId !== undefined) q.where('po.partner_id', filter.partnerId);
      if (filter.currency !== undefined) q.where('po.currency', filter.currency);
      if (filter.status !== undefined) q.where('po.status', filter.status);
    })
    .orderBy('po.id', 'desc')
    .limit(limit)
    .select('po.*', 'pa.code as partner_code', 'pa.name as partner_name');
  return (rows as Array<Record<string, any>>).map( // eslint-disable-line @typescript-eslint/no-explicit-any -- database rows
    (r): PayoutObject => ({
      id: Number(r.id),
      program_id: Number(r.program_id),
      partner: { id: Number(r.partner_id), code: r.partner_code, name: r.partner_name },
      batch_id: r.batch_id == null ? null : Number(r.batch_id),
      currency: r.currency as Currency,
      amount_cents: Number(r.amount_cents),
      commissions_cents: Number(r.commissions_cents),
      adjustments_cents: Number(r.adjustments_cents),
      commission_count: Number(r.commission_count),
      method: r.method as PayoutMethod,
      reference: r.reference,
      status: r.status as PayoutStatus,
      note: r.note ?? null,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
  );
}

export async function partnerRef(db: Knex, partnerId: number): Promise<PartnerRef> {
  const p = await db('partners').where({ id: partnerId }).first('id', 'code', 'name');
  return { id: Number(p.id), code: p.code, name: p.name };
}
