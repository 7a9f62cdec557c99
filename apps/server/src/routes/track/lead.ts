/** POST /api/v1/track/lead — spec 4.2, 3.1 (lead rows), 7.4. */
import type { Context } from 'koa';
import { insertId } from '../../db/insert-id.js';
import type { Knex } from 'knex';
import { ERRORS, type LeadResponse } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str, testModeOf, text } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, type KeyContext } from '../../auth/program-key.js';
import { findCustomer, type CustomerRecord } from '../../db/customers.js';
import type { Atomic } from '../../db/atomic.js';

// 4.2: a header that carries a token matching no program is the only 401 of this route.
const LEAD_KEY_ERRORS = { malformed: ERRORS.leadInvalidToken, missing: ERRORS.leadInvalidToken, invalid: ERRORS.leadInvalidToken };

export interface LeadInput {
  clickId?: string;
  customerKey?: string;
  email: string | null;
  sessionId: string | null;
  pageUrl: string | null;
}

export async function testLead(trx: Knex.Transaction, input: LeadInput, programId: number, now: number): Promise<LeadResponse> {
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

/** The 3.1 transitions from `click` (and from a provisional lead). */
async function recordLead(trx: Knex.Transaction, customer: CustomerRecord, input: LeadInput, mode: 'server' | 'browser', now: number, test: boolean): Promise<LeadResponse> {
  if (customer.status !== 'click') fail(ERRORS.leadStatus, { status: customer.status });
  const provisional = customer.provisionalLeadId === null ? undefined : { id: customer.provisionalLeadId };
  if (mode === 'browser' && customer.leadAuth === 'server_required') {
    // Provisional: not settled, no user id saved, not counted or paid; repeating it records nothing.
    const leadId = provisional
      ? Number(provisional.id)
      : await insertId(trx, 'lead_events', {
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
    return { success: true, provisional: true, data: { click_id: customer.clickId, customer_status: 'click', lead_id: leadId } };
  }
  const customerKey = input.customerKey ?? customer.customerKey;
  let leadId: number;
  let leadAt = now;
  if (provisional) {
    leadId = Number(provisional.id);
    const row = await trx('lead_events').where({ id: leadId }).first('lead_timestamp');
    leadAt = Number(row?.lead_timestamp ?? now);
    await trx('lead_events').where({ id: leadId }).update({ provisional: false, settled_at: now, source: mode, customer_key: customerKey, email: input.email });
  } else {
    leadId = await insertId(trx, 'lead_events', {
      program_id: customer.programId,
      customer_id: customer.id,
      click_id: customer.clickId,
      customer_key: customerKey,
      email: input.email,
      session_id: input.sessionId,
      page_url: input.pageUrl,
      provisional: false,
      source: mode,
      is_test: test,
      lead_timestamp: now,
      settled_at: now,
      created_at: now,
    });
  }
  const updated = await trx('customers')
    .where({ id: customer.id, status: 'click' })
    .update({ status: 'lead', lead_at: leadAt, customer_key: customerKey, ...(input.email ? { email: input.email } : {}) });
  // A concurrent lead for the same customer won the race; answer as the 3.1 row for `lead` says.
  if (updated === 0) fail(ERRORS.leadStatus, { status: 'lead' });
  if (customer.partnerId !== null && !test) {
    await trx('partner_programs').where({ partner_id: customer.partnerId, program_id: customer.programId }).increment('leads', 1);
  }
  return { success: true, data: { click_id: customer.clickId, customer_status: 'lead', lead_id: leadId } };
}

/**
 * The lead call after authentication and validation, in one transaction. `test` runs the same
 * rules on the test-flagged customers of a synthetic chain, counting nothing.
 */
export function performLead(atomic: Atomic, key: KeyContext | undefined, input: LeadInput, now: number, test = false): Promise<LeadResponse> {
  return atomic(async (trx) => {
    const customer = await findCustomer(trx, input, key?.programId, test);
    if (!customer) fail(ERRORS.leadCustomerNotFound);
    if (key && customer.programId !== key.programId) fail(ERRORS.leadWrongProgram);
    return recordLead(trx, customer, input, key ? 'server' : 'browser', now, test);
  });
}

export function trackLead(deps: AppDeps) {
  return async function handleLead(ctx: Context): Promise<void> {
    const key: KeyContext | undefined = await authenticateProgramKey(ctx, LEAD_KEY_ERRORS, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }, true);
    const body = readBody(ctx);
    const input: LeadInput = {
      clickId: str(body.click_id),
      customerKey: str(body.customer_key),
      email: text(str(body.email)?.toLowerCase(), 320),
      sessionId: text(body.session_id, 255),
      pageUrl: text(body.page_url, 2048),
    };
    if (!input.clickId && !input.customerKey) fail(ERRORS.leadIdRequired);
    const test = testModeOf(body);
    if (test.testMode && key && test.programId !== undefined && test.programId !== key.programId) fail(ERRORS.programIdMismatch);
    const now = deps.now();
    if (test.testMode) {
      ctx.body = await deps.atomic(async (trx) => {
        const programId = test.programId ?? key?.programId ?? (await findCustomer(trx, input))?.programId;
        if (programId === undefined || !(await trx('programs').where({ id: programId }).first('id'))) fail(ERRORS.leadCustomerNotFound);
        return testLead(trx, input, programId, now);
      });
      return;
    }
    ctx.body = await performLead(deps.atomic, key, input, now);
  };
}
