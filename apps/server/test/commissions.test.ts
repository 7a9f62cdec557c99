/**
 * Commissions and payouts (docs/commissions.md): the ledger, hold and approval, decline, payouts,
 * claw-back, payout files and balances — over HTTP on the real server, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { createAgentKey } from '../src/auth/agent-key.js';
import { PAYOUT_DETAILS_COLUMN } from '../src/domain/payout-details.js';

let s: TestServer;
let owner: Record<string, string>;
let member: Record<string, string>;
let restricted: Record<string, string>;
let outsider: Record<string, string>;
const DAY = 86_400_000;

beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
  member = await signInAs(s, 'member@acme.test');
  restricted = await signInAs(s, 'restricted@acme.test');
  outsider = await signInAs(s, 'outsider@else.test');
});
afterAll(() => s?.close());

let n = 0;
/** A new customer of `link`'s partner buys for `amount` in `currency`: the commission's id (20% on program 1). */
async function sold(link = 'pat20', amount = 10_000, currency = 'USD'): Promise<{ transactionId: string; commissionId: number; saleId: number }> {
  const clickId = await click(s, link);
  await serverLead(s, clickId, `cm-${++n}`);
  const transactionId = `cm-${dbKind}-${n}-${Date.now()}`;
  const res = await sale(s, { transaction_id: transactionId, click_id: clickId, amount_cents: amount, currency });
  expect(res.status, res.text).toBe(200);
  return { transactionId, commissionId: res.body.data.commission_id, saleId: res.body.data.sale_id };
}

const json = (headers: Record<string, string>) => ({ ...headers, origin: s.url });
const approve = (ids: number[], who = owner) => s.post('/api/dashboard/programs/1/commissions/approve', { ids }, json(who));
const decline = (ids: number[], reason: unknown, who = owner) => s.post('/api/dashboard/programs/1/commissions/decline', { ids, reason }, json(who));
const ledger = (query = '', who = owner) => s.get(`/api/dashboard/programs/1/commissions${query}`, who);
const statusOf = async (id: number) => (await s.db('commissions').where({ id }).first('status')).status as string;
const payout = (body: Record<string, unknown>) => s.post('/api/dashboard/programs/1/payouts', body, json(owner));
const patchPayout = (id: number, body: Record<string, unknown>) => s.raw(`/api/dashboard/payouts/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify(body) });
const balance = async (partnerId: number, currency: string) => {
  const res = await s.get(`/api/dashboard/programs/1/balances?partner_id=${partnerId}`, owner);
  expect(res.status, res.text).toBe(200);
  return res.body.data.find((b: { currency: string }) => b.currency === currency);
};

/** Pays out everything partner 2 (sam) has approved in `currency`, so each test starts from an empty approved balance. */
async function settleSam(currency = 'USD') {
  const pending = await s.db('commissions').where({ program_id: 1, partner_id: 2, currency, status: 'pending' }).pluck('id');
  if (pending.length) await approve(pending.map(Number));
  const res = await payout({ partner_id: 2, currency, method: 'manual' });
  expect([201, 409]).toContain(res.status);
}

describe(`[${dbKind}] commission ledger`, () => {
  it('a real sale creates a pending commission held for the program\'s hold period (30 days by default)', async () => {
    const before = Date.now();
    const { commissionId } = await sold();
    const row = (await ledger()).body.data.find((c: { id: number }) => c.id === commissionId);
    expect(row).toMatchObject({ status: 'pending', amount_cents: 2000, currency: 'USD', partner: { id: 1, code: 'pat', name: 'Pat' }, adjustments_cents: 0, payout_id: null, sale_amount_cents: 10_000, refunded_amount_cents: 0 });
    const hold = Date.parse(row.hold_until) - Date.parse(row.created_at);
    expect(hold).toBe(30 * DAY);
    expect(Date.parse(row.created_at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('the sale answer says why no commission was created: first_sale_only, no_partner, test_mode; null when one was', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `cm-reason-${++n}`);
    const first = await sale(s, { transaction_id: `cm-r1-${dbKind}-${n}`, click_id: clickId });
    expect(first.body.data.commission_reason).toBeNull();
    const second = await sale(s, { transaction_id: `cm-r2-${dbKind}-${n}`, click_id: clickId });
    expect(second.body.data).toMatchObject({ commission_id: null, commission_amount_cents: 0, commission_reason: 'first_sale_only' });
    const test = await s.post('/api/v1/track/sale', { additional_data: { test_mode: true } }, bearer(KEY1));
    expect(test.body.data).toMatchObject({ test_mode: true, commission_reason: 'test_mode' });
    const orphan = await click(s);
    await s.db('customers').where({ click_id: orphan }).update({ partner_id: null });
    await sale(s, { transaction_id: `cm-r3-${dbKind}-${n}`, click_id: orphan });
    expect((await s.db('sale_events').where({ processor_event_id: `cm-r3-${dbKind}-${n}` }).first('commission_reason')).commission_reason).toBe('no_partner');
  });

  it('filters by partner, status and currency, pages newest first with a cursor, and refuses bad filters', async () => {
    const eur = await sold('sam10', 5000, 'EUR');
    const byPartner = await ledger('?partner_id=2&currency=EUR&status=pending');
    expect(byPartner.status).toBe(200);
    expect(byPartner.body.data.every((c: { partner: { id: number }; currency: string }) => c.partner.id === 2 && c.currency === 'EUR')).toBe(true);
    expect(byPartner.body.data.map((c: { id: number }) => c.id)).toContain(eur.commissionId);
    await sold();
    await sold();
    const page1 = await ledger('?limit=2');
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.data[0].id).toBeGreaterThan(page1.body.data[1].id);
    const page2 = await ledger(`?limit=2&cursor=${page1.body.meta.next_cursor}`);
    expect(page2.body.data[0].id).toBeLessThan(page1.body.data[1].id);
    for (const [query, message] of [
      ['?status=owed', 'status must be one of: pending, approved, paid, reversed, declined'],
      ['?currency=XXX', 'currency must be a supported three-letter currency code, such as USD'],
      ['?cursor=abc', 'cursor must be the next_cursor of an earlier page'],
      ['?partner_id=-1', 'partner_id must be a positive integer'],
      ['?from=yesterday', 'from must be an ISO 8601 date or time'],
      ['?from=2026-12-01&to=2026-11-01', 'from must not be after to'],
      ['?limit=201', 'limit must be an integer from 1 to 200'],
    ]) {
      const res = await ledger(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.message).toBe(message);
    }
  });

  it('exports the filtered ledger as CSV, amounts in minor units with their currency', async () => {
    const { commissionId, transactionId } = await sold();
    const res = await ledger('?format=csv&partner_id=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = res.text.trim().split('\r\n');
    expect(lines[0]).toBe('commission_id,created_at,status,status_reason,partner_id,partner_code,partner_name,transaction_id,customer_key,currency,amount_minor,adjustments_minor,sale_amount_minor,refunded_minor,hold_until,payout_id,review_reasons');
    const row = lines.find((l) => l.startsWith(`${commissionId},`))!.split(',');
    expect(row[2]).toBe('pending');
    expect(row[7]).toBe(transactionId);
    expect(row.slice(9, 14)).toEqual(['USD', '2000', '0', '10000', '0']);
  });

  it('members read the ledger; restricted members and other workspaces do not', async () => {
    expect((await ledger('', member)).status).toBe(200);
    const denied = await ledger('', restricted);
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toBe('Your role in this workspace does not allow this (commissions:read required)');
    expect((await ledger('', outsider)).status).toBe(404);
  });
});

describe(`[${dbKind}] held for review: self-referral`, () => {
  it("a sale whose customer's e-mail is the partner's own (any case, any +tag) is held for review, with the reason in the ledger, and never approved by the job", async () => {
    const clickId = await click(s, 'pat20');
    const lead = await s.post('/api/v1/track/lead', { click_id: clickId, customer_key: `self-${dbKind}`, email: 'PAT+shop@p.test' }, bearer(KEY1));
    expect(lead.status, lead.text).toBe(200);
    const res = await sale(s, { transaction_id: `self-${dbKind}-${Date.now()}`, click_id: clickId, amount_cents: 4_000 });
    expect(res.status, res.text).toBe(200);
    const commissionId = res.body.data.commission_id as number;
    const row = (await ledger('?limit=200')).body.data.find((c: { id: number }) => c.id === commissionId);
    expect(row).toMatchObject({ status: 'pending', review_reasons: ['self_referral_email'], hold_until: null });
    s.clock.offsetMs = 400 * DAY;
    try {
      await s.running.approval.runNow();
    } finally {
      s.clock.offsetMs = 0;
    }
    expect(await statusOf(commissionId)).toBe('pending');
    const csv = (await ledger('?format=csv')).text.split('\r\n').find((l) => l.startsWith(`${commissionId},`));
    expect(csv?.endsWith(',self_referral_email')).toBe(true);
    // The owner decides: approving keeps the reason on record.
    expect((await approve([commissionId])).status).toBe(200);
    expect((await ledger('?limit=200')).body.data.find((c: { id: number }) => c.id === commissionId)).toMatchObject({ status: 'approved', review_reasons: ['self_referral_email'] });
  });

  it('an ordinary sale has no review reasons and keeps its hold', async () => {
    const { commissionId } = await sold();
    const row = (await ledger('?limit=200')).body.data.find((c: { id: number }) => c.id === commissionId);
    expect(row.review_reasons).toEqual([]);
    expect(row.hold_until).not.toBeNull();
  });
});

describe(`[${dbKind}] hold, approve, decline`, () => {
  it('the approval job approves a pending commission once its hold has passed, not before', async () => {
    const { commissionId } = await sold();
    await s.running.approval.runNow();
    expect(await statusOf(commissionId)).toBe('pending');
    s.clock.offsetMs = 30 * DAY + 1000;
    try {
      expect(await s.running.approval.runNow()).toBeGreaterThanOrEqual(1);
    } finally {
      s.clock.offsetMs = 0;
    }
    expect(await statusOf(commissionId)).toBe('approved');
    await s.running.deps.outbox.drain();
    const audit = await s.db('audit_log').where({ action: 'commission.updated', actor_type: 'system' }).select('details');
    expect(audit.some((a) => JSON.parse(a.details).commission.id === commissionId)).toBe(true);
  });

  it('a shorter hold set on the program applies to new commissions', async () => {
    const res = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ commission_hold_days: 0 }) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.commission_hold_days).toBe(0);
    try {
      const { commissionId } = await sold();
      await s.running.approval.runNow();
      expect(await statusOf(commissionId)).toBe('approved');
    } finally {
      await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ commission_hold_days: 30 }) });
    }
    const bad = await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ commission_hold_days: 366 }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('commission_hold_days must be an integer from 0 to 365');
  });

  it('an owner approves early; the change is an event with the owner as actor', async () => {
    const { commissionId } = await sold();
    const res = await approve([commissionId]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual([{ id: commissionId, result: 'approved', status: 'approved' }]);
    await s.running.deps.outbox.drain();
    const entry = await s.db('audit_log').where({ action: 'commission.updated', actor_type: 'account' }).orderBy('id', 'desc').first();
    expect(JSON.parse(entry.details)).toMatchObject({ commission: { id: commissionId, status: 'approved' }, previous_status: 'pending' });
  });

  it('declines with a reason (pending or approved); a declined commission is never paid and a refund leaves it declined', async () => {
    const a = await sold('sam10');
    const b = await sold('sam10');
    await approve([b.commissionId]);
    expect((await decline([a.commissionId], '')).body.error.message).toBe('reason is required to decline a commission (1 to 500 characters)');
    const res = await decline([a.commissionId, b.commissionId], 'self-referral');
    expect(res.body.data.map((r: { result: string }) => r.result)).toEqual(['declined', 'declined']);
    const row = (await ledger('?status=declined')).body.data.find((c: { id: number }) => c.id === a.commissionId);
    expect(row.status_reason).toBe('self-referral');
    await s.post('/api/v1/track/refund', { transaction_id: a.transactionId }, bearer(KEY1));
    expect(await statusOf(a.commissionId)).toBe('declined');
    const paid = await payout({ partner_id: 2, currency: 'USD' });
    if (paid.status === 201) expect(await statusOf(b.commissionId)).toBe('declined');
  });

  it('bulk: up to 100 ids in one transaction with a result per id — locked, missing and foreign ids are reported, not changed', async () => {
    const fresh = await sold();
    const paid = await sold('sam10');
    await settleSam();
    await approve([paid.commissionId]);
    await payout({ partner_id: 2, currency: 'USD' });
    const foreign = 999_999;
    const res = await approve([fresh.commissionId, paid.commissionId, foreign]);
    expect(res.body.data).toEqual([
      { id: fresh.commissionId, result: 'approved', status: 'approved' },
      { id: paid.commissionId, result: 'unchanged', status: 'paid', message: 'Not changed: the commission is paid: a paid commission is locked' },
      { id: foreign, result: 'not_found', status: null, message: 'Commission not found' },
    ]);
    const declinePaid = await decline([paid.commissionId], 'too late');
    expect(declinePaid.body.data[0].result).toBe('unchanged');
    const tooMany = await approve(Array.from({ length: 101 }, (_, i) => i + 1));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toBe('ids must be a list of 1 to 100 commission ids');
    expect((await approve([])).status).toBe(400);
  });

  it('members cannot approve, decline or pay', async () => {
    const { commissionId } = await sold();
    const res = await approve([commissionId], member);
    expect(res.status).toBe(403);
    expect(await statusOf(commissionId)).toBe('pending');
    expect((await s.post('/api/dashboard/programs/1/payouts', { partner_id: 1, currency: 'USD' }, json(member))).status).toBe(403);
  });
});

describe(`[${dbKind}] payouts`, () => {
  it('pays a partner\'s approved balance in one currency: its commissions become paid in the same transaction', async () => {
    await settleSam();
    await settleSam('EUR');
    const a = await sold('sam10');
    const b = await sold('sam10');
    const eur = await sold('sam10', 5000, 'EUR');
    await approve([a.commissionId, b.commissionId, eur.commissionId]);
    const res = await payout({ partner_id: 2, currency: 'USD', method: 'paypal', reference: `PAY-${dbKind}-1` });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ partner: { id: 2, code: 'sam' }, currency: 'USD', amount_cents: 4000, commissions_cents: 4000, adjustments_cents: 0, commission_count: 2, method: 'paypal', reference: `PAY-${dbKind}-1`, status: 'created' });
    expect(await statusOf(a.commissionId)).toBe('paid');
    expect(await statusOf(eur.commissionId)).toBe('approved');
    const again = await payout({ partner_id: 2, currency: 'USD' });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('Nothing to pay: this partner has no positive approved balance in USD (approved commissions net of claw-backs)');
    const taken = await payout({ partner_id: 2, currency: 'EUR', reference: `PAY-${dbKind}-1` });
    expect(taken.status).toBe(409);
    expect(await statusOf(eur.commissionId)).toBe('approved');
  });

  it('a payout is marked sent; failed returns its commissions to approved; other transitions are refused', async () => {
    await settleSam();
    const a = await sold('sam10');
    await approve([a.commissionId]);
    const created = (await payout({ partner_id: 2, currency: 'USD' })).body.data;
    expect(created.reference).toBe(`PO-1-${created.id}`);
    const sent = await patchPayout(created.id, { status: 'sent' });
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body.data.status).toBe('sent');
    const failed = await patchPayout(created.id, { status: 'failed', note: 'bounced' });
    expect(failed.body.data).toMatchObject({ status: 'failed', note: 'bounced' });
    expect(await statusOf(a.commissionId)).toBe('approved');
    const back = await patchPayout(created.id, { status: 'sent' });
    expect(back.status).toBe(409);
    expect(back.body.error.message).toBe('A failed payout cannot become sent (created → sent or failed; sent → failed)');
    expect((await patchPayout(created.id, { status: 'created' })).status).toBe(400);
    const repaid = await payout({ partner_id: 2, currency: 'USD' });
    expect(repaid.body.data.commission_count).toBe(1);
  });

  it('a batch pays every partner at or above the program\'s minimum and lists the rest as skipped', async () => {
    await settleSam();
    const pat = await s.db('commissions').where({ program_id: 1, partner_id: 1, currency: 'USD' }).whereIn('status', ['pending', 'approved']).pluck('id');
    if (pat.length) await approve(pat.map(Number));
    const small = await sold('sam10', 1000); // 2.00 USD commission
    await approve([small.commissionId]);
    await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ payout_minimum: 5 }) });
    try {
      const res = await s.post('/api/dashboard/programs/1/payout-batches', { method: 'manual', currency: 'USD' }, json(owner));
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.payouts.map((p: { partner: { code: string } }) => p.partner.code)).toEqual(['pat']);
      expect(res.body.data.skipped).toEqual([{ partner: { id: 2, code: 'sam', name: 'Sam' }, currency: 'USD', payable_cents: 200, reason: 'below_minimum' }]);
      expect(await statusOf(small.commissionId)).toBe('approved');
      const empty = await s.post('/api/dashboard/programs/1/payout-batches', { method: 'manual', currency: 'USD' }, json(owner));
      expect(empty.status).toBe(409);
      expect(empty.body.error.message).toBe('No partner has an approved balance at or above the payout minimum');
    } finally {
      await s.raw('/api/dashboard/programs/1', { method: 'PATCH', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ payout_minimum: 0 }) });
    }
  });
});

describe(`[${dbKind}] claw-back`, () => {
  it('a refund after payout leaves a negative balance, carried into the next payout and shown as such', async () => {
    await settleSam();
    const a = await sold('sam10');
    await approve([a.commissionId]);
    const first = (await payout({ partner_id: 2, currency: 'USD' })).body.data;
    const refund = await s.post('/api/v1/track/refund', { transaction_id: a.transactionId }, bearer(KEY1));
    expect(refund.body.data).toMatchObject({ commission_status: 'reversed', adjustment_amount_cents: -2000 });
    const owed = await balance(2, 'USD');
    expect(owed).toMatchObject({ open_clawback_cents: 2000, payable_cents: -2000 });
    const none = await payout({ partner_id: 2, currency: 'USD' });
    expect(none.status).toBe(409);
    const b = await sold('sam10', 30_000); // 6000 commission
    await approve([b.commissionId]);
    const next = await payout({ partner_id: 2, currency: 'USD' });
    expect(next.body.data).toMatchObject({ commissions_cents: 6000, adjustments_cents: -2000, amount_cents: 4000 });
    expect(await balance(2, 'USD')).toMatchObject({ open_clawback_cents: 0, payable_cents: 0 });
    expect(first.amount_cents).toBe(2000);
  });

  it('a payout that fails after one of its commissions was refunded cancels that claw-back: the partner was never paid it', async () => {
    await settleSam();
    const a = await sold('sam10');
    const b = await sold('sam10');
    await approve([a.commissionId, b.commissionId]);
    const po = (await payout({ partner_id: 2, currency: 'USD' })).body.data;
    await s.post('/api/v1/track/refund', { transaction_id: a.transactionId }, bearer(KEY1));
    expect((await balance(2, 'USD')).open_clawback_cents).toBe(2000);
    await patchPayout(po.id, { status: 'failed' });
    const after = await balance(2, 'USD');
    expect(after.open_clawback_cents).toBe(0);
    expect(await statusOf(a.commissionId)).toBe('reversed');
    expect(await statusOf(b.commissionId)).toBe('approved');
    expect(after.payable_cents).toBe(2000);
  });

  it('balances are per currency, never summed across currencies', async () => {
    await sold('sam10', 10_000, 'EUR');
    await sold('sam10', 1_000_000, 'VND');
    const res = await s.get('/api/dashboard/programs/1/balances?partner_id=2', owner);
    const currencies = res.body.data.map((b: { currency: string }) => b.currency).sort();
    expect(currencies).toEqual(expect.arrayContaining(['EUR', 'USD', 'VND']));
    expect(new Set(currencies).size).toBe(currencies.length);
  });
});

/** RFC 4180 lines → cells (what a spreadsheet or the payment service's importer reads). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(cell), (cell = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    } else cell += ch;
  }
  if (cell || row.length) row.push(cell), rows.push(row);
  return rows;
}

describe(`[${dbKind}] payout details and payout files`, () => {
  it('payout details are validated, encrypted at rest and shown only as a summary', async () => {
    const bad = await s.raw('/api/dashboard/partners/1/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ method: 'paypal', paypal_email: 'nope' }) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('paypal_email must be an e-mail address');
    const put = await s.raw('/api/dashboard/partners/1/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ method: 'paypal', paypal_email: 'pat.payouts@p.test' }) });
    expect(put.status, put.text).toBe(200);
    expect(put.body.data).toMatchObject({ partner_id: 1, method: 'paypal', summary: 'pat.payouts@p.test' });
    const wise = await s.raw('/api/dashboard/partners/2/payout-details', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...json(owner) },
      body: JSON.stringify({ method: 'wise', account_holder: 'Sam, Sample "Jr"', email: 'sam@p.test', iban: 'DE89 3704 0044 0532 0130 00', bic: 'COBADEFFXXX' }),
    });
    expect(wise.status, wise.text).toBe(200);
    expect(wise.body.data.summary).toBe('Sam, Sample "Jr", account ending 3000');
    const raw = JSON.stringify(await s.db('partner_payout_details').select());
    expect(raw).not.toContain('pat.payouts@p.test');
    expect(raw).not.toContain('DE89370400440532013000');
    expect((await s.get('/api/dashboard/partners/1/payout-details', outsider)).status).toBe(404);
    expect((await s.raw('/api/dashboard/partners/1/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(member) }, body: JSON.stringify({ method: 'paypal', paypal_email: 'x@p.test' }) })).status).toBe(403);
  });

  it('a batch exports as PayPal Payouts and Wise batch files, one currency per file, that parse back to the payouts', async () => {
    await settleSam();
    const pat = await s.db('commissions').where({ program_id: 1, partner_id: 1, currency: 'USD' }).whereIn('status', ['pending']).pluck('id');
    if (pat.length) await approve(pat.map(Number));
    await approve([(await sold('sam10', 12_345)).commissionId]);
    await approve([(await sold('pat20', 50_000)).commissionId]);
    const batch = await s.post('/api/dashboard/programs/1/payout-batches', { method: 'paypal', currency: 'USD' }, json(owner));
    expect(batch.status, batch.text).toBe(201);
    const payouts = batch.body.data.payouts as Array<{ partner: { code: string }; amount_cents: number; reference: string }>;
    const id = batch.body.data.batch_id;
    // PayPal needs PayPal details for every partner in the file: sam has Wise details only.
    const missing = await s.get(`/api/dashboard/payout-batches/${id}/export?format=paypal&currency=USD`, owner);
    expect(missing.status).toBe(409);
    expect(missing.body.error.message).toBe('These partners have no paypal payout details: sam. Add them (Partners → payout details) and export again.');
    await s.raw('/api/dashboard/partners/2/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ method: 'paypal', paypal_email: 'sam.pay@p.test' }) });
    const paypal = await s.get(`/api/dashboard/payout-batches/${id}/export?format=paypal&currency=USD`, owner);
    expect(paypal.status, paypal.text).toBe(200);
    const rows = parseCsv(paypal.text);
    expect(rows).toHaveLength(payouts.length);
    for (const p of payouts) {
      const row = rows.find((r) => r[3] === p.reference.replace(/\s+/g, '').slice(0, 30))!;
      expect(row[0]).toBe(p.partner.code === 'pat' ? 'pat.payouts@p.test' : 'sam.pay@p.test');
      expect(Math.round(Number(row[1]) * 100)).toBe(p.amount_cents);
      expect(row[2]).toBe('USD');
      expect(row[5]).toBe('PayPal');
    }
    await s.raw('/api/dashboard/partners/1/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ method: 'wise', account_holder: 'Pat', email: 'pat@p.test', account_number: '12345678', sort_code: '23-14-70' }) });
    await s.raw('/api/dashboard/partners/2/payout-details', { method: 'PUT', headers: { 'content-type': 'application/json', ...json(owner) }, body: JSON.stringify({ method: 'wise', account_holder: 'Sam, Sample "Jr"', email: 'sam@p.test', iban: 'DE89370400440532013000' }) });
    const wise = await s.get(`/api/dashboard/payout-batches/${id}/export?format=wise&currency=USD`, owner);
    expect(wise.status, wise.text).toBe(200);
    const [header, ...lines] = parseCsv(wise.text);
    expect(header).toEqual(['name', 'recipientEmail', 'paymentReference', 'receiverType', 'amountCurrency', 'amount', 'sourceCurrency', 'targetCurrency', 'IBAN', 'BIC', 'accountNumber', 'sortCode', 'abartn', 'accountType']);
    expect(lines).toHaveLength(payouts.length);
    const sam = lines.find((l) => l[0] === 'Sam, Sample "Jr"')!;
    expect(sam.slice(1, 9)).toEqual(['sam@p.test', expect.any(String), 'PRIVATE', 'target', expect.any(String), 'USD', 'USD', 'DE89370400440532013000'].slice(0, 8));
    const samPayout = payouts.find((p) => p.partner.code === 'sam')!;
    expect(Math.round(Number(sam[5]) * 100)).toBe(samPayout.amount_cents);
    const patLine = lines.find((l) => l[0] === 'Pat')!;
    expect(patLine.slice(10, 12)).toEqual(['12345678', '231470']);
    expect((await s.get(`/api/dashboard/payout-batches/${id}/export?format=csv&currency=USD`, owner)).status).toBe(400);
    expect((await s.get(`/api/dashboard/payout-batches/${id}/export?format=wise`, owner)).status).toBe(400);
    expect((await s.get(`/api/dashboard/payout-batches/${id}/export?format=wise&currency=USD`, outsider)).status).toBe(404);
  });
});

describe(`[${dbKind}] payout files in parts`, () => {
  it('a Wise file holds at most 1,000 payouts: a bigger batch is exported in parts, and the header says how many', async () => {
    const now = Date.now();
    const batchId = (await s.db('payout_batches').insert({ program_id: 1, method: 'wise', created_at: now }).returning('id'))[0];
    const bid = typeof batchId === 'object' ? batchId.id : batchId;
    const partners = Array.from({ length: 1001 }, (_, i) => ({ name: `Bulk ${i}`, code: `bulk-${dbKind}-${i}`, workspace_id: 1, created_at: now }));
    const ids: number[] = [];
    for (let i = 0; i < partners.length; i += 250) {
      const rows = await s.db('partners').insert(partners.slice(i, i + 250)).returning('id');
      ids.push(...rows.map((r: number | { id: number }) => (typeof r === 'object' ? r.id : r)));
    }
    const sealed = s.running.deps.secrets.seal(JSON.stringify({ method: 'wise', account_holder: 'Bulk', email: 'bulk@p.test', iban: 'DE89370400440532013000' }), PAYOUT_DETAILS_COLUMN.purpose);
    for (let i = 0; i < ids.length; i += 250) {
      await s.db('partner_payout_details').insert(ids.slice(i, i + 250).map((partner_id) => ({ partner_id, method: 'wise', details_sealed: sealed, updated_at: now })));
      await s.db('payouts').insert(
        ids.slice(i, i + 250).map((partner_id, j) => ({
          program_id: 1, partner_id, batch_id: bid, currency: 'EUR', amount_cents: 1000, commissions_cents: 1000, adjustments_cents: 0, commission_count: 1,
          method: 'wise', reference: `BULK-${i + j}`, status: 'created', created_at: now, updated_at: now,
        })),
      );
    }
    const first = await s.get(`/api/dashboard/payout-batches/${bid}/export?format=wise&currency=EUR`, owner);
    expect(first.status, first.text).toBe(200);
    expect(first.headers.get('reftrack-file-parts')).toBe('2');
    expect(parseCsv(first.text)).toHaveLength(1 + 1000);
    const second = await s.get(`/api/dashboard/payout-batches/${bid}/export?format=wise&currency=EUR&part=2`, owner);
    expect(parseCsv(second.text)).toHaveLength(1 + 1);
    const beyond = await s.get(`/api/dashboard/payout-batches/${bid}/export?format=wise&currency=EUR&part=3`, owner);
    expect(beyond.status).toBe(400);
    expect(beyond.body.error.message).toBe('part must be a whole number from 1 to 2 (the number of files this batch and currency need)');
  });
});

describe(`[${dbKind}] agent API`, () => {
  it('an agent key with commissions:read lists the ledger, balances and payouts; without the scope it is refused', async () => {
    const withScope = await createAgentKey(s.db, 1, ['commissions:read'], 'books');
    const without = await createAgentKey(s.db, 1, ['programs:read'], 'programs');
    const list = await s.get('/api/agent/v1/programs/1/commissions?limit=1', bearer(withScope));
    expect(list.status, list.text).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect((await s.get('/api/agent/v1/programs/1/balances', bearer(withScope))).status).toBe(200);
    expect((await s.get('/api/agent/v1/programs/1/payouts', bearer(withScope))).status).toBe(200);
    const refused = await s.get('/api/agent/v1/programs/1/commissions', bearer(without));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('This agent key lacks the commissions:read scope');
    expect((await s.get('/api/agent/v1/programs/4/commissions', bearer(withScope))).status).toBe(404);
  });
});

describe(`[${dbKind}] money views`, () => {
  it('listed sales show their refund state and refunded amount; every listed event carries its partner', async () => {
    const { transactionId } = await sold('sam10', 8000);
    const before = (await s.get('/api/tracking/events/1?eventType=conversion&pageSize=100', owner)).body.data.find((e: { processor_event_id: string }) => e.processor_event_id === transactionId);
    expect(before).toMatchObject({ payment_status: 'paid', refund_status: 'none', refunded_amount_cents: 0, partner: { id: 2, code: 'sam' } });
    await s.post('/api/v1/track/refund', { transaction_id: transactionId, reason: 'chargeback' }, bearer(KEY1));
    const after = (await s.get('/api/tracking/events/1?eventType=conversion&pageSize=100', owner)).body.data.find((e: { processor_event_id: string }) => e.processor_event_id === transactionId);
    expect(after).toMatchObject({ refund_status: 'charged_back', refunded_amount_cents: 8000, partner: { id: 2, code: 'sam' } });
    const clicks = (await s.get('/api/tracking/events/1?eventType=click&pageSize=5', owner)).body.data;
    expect(clicks.every((e: { partner: { id: number } | null }) => e.partner !== null && typeof e.partner.id === 'number')).toBe(true);
  });

  it('the partners page shows earnings per currency, net of refunds', async () => {
    const eurSale = await sold('sam10', 20_000, 'EUR');
    await sold('sam10', 10_000, 'EUR');
    await s.post('/api/v1/track/refund', { transaction_id: eurSale.transactionId }, bearer(KEY1));
    const res = await s.get('/api/dashboard/programs/1/partners', owner);
    const sam = res.body.data.find((p: { code: string }) => p.code === 'sam');
    const eur = sam.earnings.find((e: { currency: string }) => e.currency === 'EUR');
    const rows = await s.db('sale_events as s').join('customers as c', 'c.id', 's.customer_id').where({ 's.program_id': 1, 'c.partner_id': 2, 's.currency': 'EUR', 's.is_test': false }).select('s.id', 's.amount_cents');
    const refunded = await s.db('refunds').whereIn('sale_id', rows.map((r) => r.id)).sum({ n: 'amount_cents' }).first();
    expect(eur.revenue_cents).toBe(rows.reduce((n, r) => n + Number(r.amount_cents), 0) - Number(refunded?.n ?? 0));
    expect(sam.earnings.map((e: { currency: string }) => e.currency)).toEqual([...new Set(sam.earnings.map((e: { currency: string }) => e.currency))]);
  });
});
