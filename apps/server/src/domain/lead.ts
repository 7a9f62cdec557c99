/**
 * Spec 4.2 and the lead rows of 3.1: recording a lead, with provisional settlement under
 * `server_required`. Called by the lead route, the Stripe intake (a payment settles a provisional
 * lead) and the synthetic chains. Each new lead writes `lead.created`, each settlement
 * `lead.settled`, in the lead's own transaction (test records write no events).
 */
import type { Knex } from 'knex';
import { ERRORS, type LeadResponse } from '@reftrack/contract';
import { ApiError, fail } from '../api-error.js';
import { insertId } from '../db/insert-id.js';
import { appendEvents, eventRow, type NewEvent } from '../db/outbox.js';
import { findCustomer, type CustomerRecord } from '../db/customers.js';
import { changedRows } from '../db/statement.js';
import type { Atomic } from '../db/atomic.js';
import { isSqlite } from '../db/knex.js';
import { isRefusedStatement, onPgConnection, readForLeads, writeLeads, type LeadWrite } from '../db/pg-tracking.js';
import { queuePerDatabase, type BatchOutcome } from '../db/group-commit-queue.js';
import type { Db } from '../db/knex.js';
import type { AppDeps } from '../deps.js';
import { leadObject } from './event-objects.js';

export interface LeadInput {
  clickId?: string;
  customerKey?: string;
  email: string | null;
  sessionId: string | null;
  pageUrl: string | null;
}

/**
 * Who sends the lead: `server` (a program key, or a verified processor event standing for it),
 * `browser` (no key), `processor` (a payment settled a provisional lead).
 */
export type LeadSource = 'server' | 'browser' | 'processor';

/** 4.2 test mode: a test-flagged lead and a log entry for the program; no customer changes. */
export async function recordTestLead(trx: Knex.Transaction, input: LeadInput, programId: number, now: number): Promise<LeadResponse> {
  const leadId = await insertId(trx, 'lead_events', {
    program_id: programId,
    click_id: input.clickId ?? null,
    customer_key: input.customerKey ?? null,
    email: input.email,
    session_id: input.sessionId,
    page_url: input.pageUrl,
    provisional: false,
    source: 'test',
    is_test: true,
    lead_timestamp: now,
    created_at: now,
  });
  await trx('tracking_logs').insert({ program_id: programId, kind: 'lead', is_test: true, message: 'Test lead recorded', created_at: now });
  return { success: true, data: { click_id: input.clickId ?? null, customer_status: 'lead', lead_id: leadId, test_mode: true } };
}

/**
 * The test-mode lead call: the program is the one named in test mode, else the key's, else the
 * customer's; a program that does not exist is the 404 of a missing customer.
 */
export function recordTestLeadFor(atomic: Atomic, input: LeadInput, programId: number | undefined, now: number): Promise<LeadResponse> {
  return atomic(async (trx) => {
    const id = programId ?? (await findCustomer(trx, input))?.programId;
    if (id === undefined || !(await trx('programs').where({ id }).first('id'))) fail(ERRORS.leadCustomerNotFound);
    return recordTestLead(trx, input, id, now);
  });
}

/** 7.4's refusals before a lead is recorded, in the spec's order, and the 3.1 rule that only `click` moves on. */
function checkLead(customer: CustomerRecord | undefined, programId: number | undefined): asserts customer is CustomerRecord {
  if (!customer) fail(ERRORS.leadCustomerNotFound);
  if (programId !== undefined && customer.programId !== programId) fail(ERRORS.leadWrongProgram);
  if (customer.status !== 'click') fail(ERRORS.leadStatus, { status: customer.status });
}

/** A new settled lead (no provisional one to settle). */
function settledLeadRow(customer: CustomerRecord, input: LeadInput, customerKey: string | null, source: LeadSource, now: number, test: boolean) {
  return {
    program_id: customer.programId,
    customer_id: customer.id,
    click_id: customer.clickId,
    customer_key: customerKey,
    email: input.email,
    session_id: input.sessionId,
    page_url: input.pageUrl,
    provisional: false,
    source,
    is_test: test,
    lead_timestamp: now,
    settled_at: now,
    created_at: now,
  };
}

/** `lead.created`, or `lead.settled` when a provisional lead was settled. */
function settledLeadEvent(customer: CustomerRecord, leadId: number, customerKey: string | null, source: LeadSource, leadAt: number, now: number, settledProvisional: boolean): NewEvent {
  const lead = leadObject({ programId: customer.programId, clickId: customer.clickId, partnerId: customer.partnerId, id: leadId, customerKey, provisional: false, source, createdAt: leadAt, settledAt: now });
  return { type: settledProvisional ? 'lead.settled' : 'lead.created', programId: customer.programId, workspaceId: customer.workspaceId, data: { lead }, occurredAt: now };
}

// 3.1: only a customer still in `click` moves to `lead` (a concurrent lead that moved it first
// leaves nothing to change). Fixed texts (db/statement.ts): every lead sends them.
const CUSTOMER_TO_LEAD = `update customers set status = 'lead', lead_at = ?, customer_key = ? where id = ? and status = 'click'`;
const CUSTOMER_TO_LEAD_WITH_EMAIL = `update customers set status = 'lead', lead_at = ?, customer_key = ?, email = ? where id = ? and status = 'click'`;
/** The partner's lead count in the program (partner_programs.leads). */
const COUNT_LEAD = `update partner_programs set leads = leads + 1 where partner_id = ? and program_id = ?`;

/** The 3.1 transitions from `click` (and from a provisional lead). */
async function recordLead(trx: Knex.Transaction, customer: CustomerRecord, input: LeadInput, source: LeadSource, now: number, test: boolean): Promise<LeadResponse> {
  const provisional = customer.provisionalLeadId === null ? undefined : { id: customer.provisionalLeadId };
  const facts = { programId: customer.programId, clickId: customer.clickId, partnerId: customer.partnerId };
  if (source === 'browser' && customer.leadAuth === 'server_required') {
    // Provisional: not settled, no user id saved, not counted or paid; repeating it records nothing.
    if (provisional) return { success: true, provisional: true, data: { click_id: customer.clickId, customer_status: 'click', lead_id: Number(provisional.id) } };
    const leadId = await insertId(trx, 'lead_events', {
      program_id: customer.programId,
      customer_id: customer.id,
      click_id: customer.clickId,
      session_id: input.sessionId,
      page_url: input.pageUrl,
      provisional: true,
      source: 'browser',
      is_test: test,
      lead_timestamp: now,
      created_at: now,
    });
    if (!test) {
      const lead = leadObject({ ...facts, id: leadId, customerKey: null, provisional: true, source: 'browser', createdAt: now, settledAt: null });
      await appendEvents(trx, [{ type: 'lead.created', programId: customer.programId, workspaceId: customer.workspaceId, data: { lead }, occurredAt: now }]);
    }
    return { success: true, provisional: true, data: { click_id: customer.clickId, customer_status: 'click', lead_id: leadId } };
  }
  const customerKey = input.customerKey ?? customer.customerKey;
  let leadId: number;
  let leadAt = now;
  if (provisional) {
    leadId = Number(provisional.id);
    const row = await trx('lead_events').where({ id: leadId }).first('lead_timestamp');
    leadAt = Number(row?.lead_timestamp ?? now);
    await trx('lead_events').where({ id: leadId }).update({ provisional: false, settled_at: now, source, customer_key: customerKey, email: input.email });
  } else {
    leadId = await insertId(trx, 'lead_events', settledLeadRow(customer, input, customerKey, source, now, test));
  }
  const updated = input.email
    ? await changedRows(trx, CUSTOMER_TO_LEAD_WITH_EMAIL, [leadAt, customerKey, input.email, customer.id])
    : await changedRows(trx, CUSTOMER_TO_LEAD, [leadAt, customerKey, customer.id]);
  // A concurrent lead for the same customer won the race; answer as the 3.1 row for `lead` says.
  if (updated === 0) fail(ERRORS.leadStatus, { status: 'lead' });
  if (!test) {
    if (customer.partnerId !== null) await changedRows(trx, COUNT_LEAD, [customer.partnerId, customer.programId]);
    await appendEvents(trx, [settledLeadEvent(customer, leadId, customerKey, source, leadAt, now, provisional !== undefined)]);
  }
  return settledLeadResponse(customer, leadId);
}

const settledLeadResponse = (customer: CustomerRecord, leadId: number): LeadResponse => ({ success: true, data: { click_id: customer.clickId, customer_status: 'lead', lead_id: leadId } });

/**
 * A lead after authentication and validation, in one unit of work. `programId` is the key's
 * program (absent for a browser lead); `test` runs the same rules on the test-flagged customers
 * of a synthetic chain, counting nothing and writing no events.
 */
export function createLead(atomic: Atomic, programId: number | undefined, input: LeadInput, source: LeadSource, now: number, test = false): Promise<LeadResponse> {
  return atomic(async (trx) => {
    const customer = await findCustomer(trx, input, programId, test);
    checkLead(customer, programId);
    return recordLead(trx, customer, input, source, now, test);
  });
}

/** A lead of the route waiting for its group commit. */
interface GroupedLead {
  programId: number | undefined;
  input: LeadInput;
  source: LeadSource;
  now: number;
}

/** Under load a group holds about as many leads as arrive during one read and write; this caps its statements' arrays. */
const LEAD_GROUP_MAX = 200;

/**
 * One group of the lead route's leads on PostgreSQL: one read for all, the same checks and rows as
 * createLead for each, one write for all. A lead settles as its answer, as its refusal, as
 * `undefined` (createLead decides it: a provisional lead is involved, or PostgreSQL refused a
 * statement of the group, which then wrote nothing), or goes round again when an earlier lead of
 * the group has its customer (it is read anew, after that lead, and answered as createLead answers
 * the loser of two concurrent leads).
 */
async function commitLeads(db: Db, leads: GroupedLead[], outcome: BatchOutcome<LeadResponse | undefined>): Promise<void> {
  const toCreateLead = (indexes: number[]) => indexes.forEach((i) => outcome.done(i, undefined));
  await onPgConnection(db, async (conn) => {
    let reads;
    try {
      reads = await readForLeads(conn, leads.map((l) => ({ ids: l.input, programId: l.programId })));
    } catch (err) {
      if (!isRefusedStatement(err)) throw err;
      return toCreateLead(leads.map((_, i) => i));
    }
    const writes: Array<{ index: number; customer: CustomerRecord; write: LeadWrite }> = [];
    const customers = new Set<number>();
    reads.forEach(({ customer, leadId }, index) => {
      const { programId, input, source, now } = leads[index]!;
      try {
        checkLead(customer, programId);
      } catch (err) {
        return outcome.failed(index, err);
      }
      const provisionalInvolved = customer.provisionalLeadId !== null || (source === 'browser' && customer.leadAuth === 'server_required');
      if (provisionalInvolved || leadId === null) return outcome.done(index, undefined);
      if (customers.has(customer.id)) return outcome.again(index);
      customers.add(customer.id);
      const customerKey = input.customerKey ?? customer.customerKey;
      writes.push({
        index,
        customer,
        write: {
          customerId: customer.id,
          row: { id: leadId, ...settledLeadRow(customer, input, customerKey, source, now, false) },
          customerEmail: input.email || null,
          countFor: customer.partnerId,
          events: [eventRow(settledLeadEvent(customer, leadId, customerKey, source, now, now, false))],
        },
      });
    });
    if (writes.length === 0) return;
    let moved: Set<number>;
    try {
      moved = await writeLeads(conn, writes.map((w) => w.write));
    } catch (err) {
      if (!isRefusedStatement(err)) throw err;
      return toCreateLead(writes.map((w) => w.index));
    }
    for (const { index, customer, write } of writes) {
      if (moved.has(customer.id)) outcome.done(index, settledLeadResponse(customer, write.row.id));
      else outcome.failed(index, new ApiError(ERRORS.leadStatus, { status: 'lead' }));
    }
  });
}

const leadGroupOf = queuePerDatabase<GroupedLead, LeadResponse | undefined>('lead', LEAD_GROUP_MAX, commitLeads);

/**
 * The lead route's unit (a real lead, not a synthetic chain's). On PostgreSQL the plain 3.1
 * transition from `click` — every lead but a provisional one or one settling a provisional one —
 * goes in a group commit (commitLeads): one read and one write statement for every lead waiting
 * at the time, decided by the same checks and rows as createLead; a lead's write changes its
 * customer only if it is still in `click`, and otherwise writes nothing of that lead and answers
 * what createLead answers a concurrent lead that lost: the status 400 with `lead`. Everything
 * else, and SQLite (group-committed in its own way, db/atomic.ts), runs createLead.
 */
export async function createStandaloneLead(deps: Pick<AppDeps, 'db' | 'atomic' | 'outbox' | 'ops'>, programId: number | undefined, input: LeadInput, source: LeadSource, now: number): Promise<LeadResponse> {
  if (isSqlite(deps.db)) return createLead(deps.atomic, programId, input, source, now);
  const response = await leadGroupOf(deps.db, deps.ops.metrics).submit({ programId, input, source, now });
  if (!response) return createLead(deps.atomic, programId, input, source, now);
  deps.outbox.poke();
  return response;
}
