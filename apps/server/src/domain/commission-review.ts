/**
 * Reviewing commissions (docs/commissions.md, "Hold, approve, decline"): an owner approves a
 * pending commission before its hold ends, or declines a pending or approved one with a reason
 * (never paid); the approval job approves pending commissions whose hold has passed. Paid,
 * reversed and declined commissions are locked.
 *
 * Every change is one conditional UPDATE (`… WHERE status = 'pending'`): when a refund, a payout or
 * another process changes the row first, the UPDATE matches nothing and this caller reports the row
 * unchanged — each transition happens once, and its `commission.updated` event is written in the
 * same transaction by whoever made it.
 */
import type { Knex } from 'knex';
import type { CommissionReviewResult, CommissionStatus, EventActor } from '@reftrack/contract';
import { appendEvents, type NewEvent } from '../db/outbox.js';
import { isSqlite } from '../db/knex.js';
import { commissionObject } from './event-objects.js';

export type ReviewAction = 'approve' | 'decline';

/** Which statuses each action moves from. */
const FROM: Record<ReviewAction, readonly CommissionStatus[]> = {
  approve: ['pending'],
  decline: ['pending', 'approved'],
};

const LOCKED_MESSAGE: Record<CommissionStatus, string> = {
  pending: 'pending',
  approved: 'already approved',
  paid: 'paid: a paid commission is locked',
  reversed: 'reversed by a refund or chargeback',
  declined: 'already declined',
};

/**
 * Approves or declines `ids` of one program in the caller's transaction (one transaction for the
 * whole list: up to LIMITS.commissionBulkMax). Ids of another program answer `not_found`, exactly
 * like missing ones.
 */
export async function reviewCommissions(
  trx: Knex.Transaction,
  programId: number,
  ids: readonly number[],
  action: ReviewAction,
  reason: string | null,
  actor: EventActor,
  now: number,
): Promise<CommissionReviewResult[]> {
  const unique = [...new Set(ids)];
  const target: CommissionStatus = action === 'approve' ? 'approved' : 'declined';
  const rows = await trx('commissions').where({ program_id: programId }).whereIn('id', unique).whereIn('status', FROM[action]).select('id', 'status');
  const previous = new Map(rows.map((r) => [Number(r.id), r.status as CommissionStatus]));
  const changedIds: number[] = [];
  // Per status, one UPDATE that re-checks the status: a row another writer moved meanwhile stays out.
  for (const from of FROM[action]) {
    const idsFrom = [...previous].filter(([, s]) => s === from).map(([id]) => id);
    if (idsFrom.length === 0) continue;
    const update = trx('commissions').whereIn('id', idsFrom).where({ status: from });
    const patch = { status: target, status_reason: reason, updated_at: now };
    if (isSqlite(trx)) {
      // SQLite has one writer: the rows read a moment ago in this transaction are the rows updated.
      await update.update(patch);
      changedIds.push(...idsFrom);
    } else {
      const changed = (await update.update(patch).returning('id')) as Array<{ id: number }>;
      changedIds.push(...changed.map((r) => Number(r.id)));
    }
  }
  const events: NewEvent[] = [];
  if (changedIds.length > 0) {
    const changedRows = await trx('commissions').whereIn('id', changedIds).select();
    for (const row of changedRows) {
      events.push({ type: 'commission.updated', programId, data: { commission: commissionObject(row), previous_status: previous.get(Number(row.id))! }, occurredAt: now, actor });
    }
    await appendEvents(trx, events);
  }
  const changedSet = new Set(changedIds);
  const missing = unique.filter((id) => !changedSet.has(id));
  const current = missing.length === 0 ? [] : await trx('commissions').where({ program_id: programId }).whereIn('id', missing).select('id', 'status');
  const statusOf = new Map(current.map((r) => [Number(r.id), r.status as CommissionStatus]));
  return unique.map((id): CommissionReviewResult => {
    if (changedSet.has(id)) return { id, result: action === 'approve' ? 'approved' : 'declined', status: target };
    const status = statusOf.get(id);
    if (status === undefined) return { id, result: 'not_found', status: null, message: 'Commission not found' };
    return { id, result: 'unchanged', status, message: `Not changed: the commission is ${LOCKED_MESSAGE[status]}` };
  });
}

/** Commissions the approval job takes per transaction: bounds a transaction's length. */
const APPROVAL_BATCH = 500;

/**
 * The approval job's unit (jobs/commission-approval.ts): pending commissions whose hold has passed
 * become approved, with their events, written by the system actor. On PostgreSQL the rows are
 * claimed with `FOR UPDATE SKIP LOCKED`, so two processes never approve the same commission; a
 * refund holding a row makes the job skip it this time. Returns how many were approved.
 */
export async function approveHeldCommissions(trx: Knex.Transaction, now: number): Promise<number> {
  const query = trx('commissions').where({ status: 'pending' }).where('hold_until', '<=', now).orderBy('id').limit(APPROVAL_BATCH).select('id', 'program_id');
  const due = isSqlite(trx) ? await query : await query.forUpdate().skipLocked();
  if (due.length === 0) return 0;
  const ids = due.map((r) => Number(r.id));
  await trx('commissions').whereIn('id', ids).where({ status: 'pending' }).update({ status: 'approved', updated_at: now });
  const rows = await trx('commissions').whereIn('id', ids).select();
  const actor: EventActor = { type: 'system', id: null, label: 'commission approval (hold passed)', ip: null };
  await appendEvents(
    trx,
    rows.map((row) => ({ type: 'commission.updated' as const, programId: Number(row.program_id), data: { commission: commissionObject(row), previous_status: 'pending' as const }, occurredAt: now, actor })),
  );
  return rows.length;
}
