/**
 * The books balance (docs/commissions.md): concurrent approval, payout and refund of the same
 * commissions, and random sequences of sales, refunds, approvals, declines, payouts and failed
 * payouts. After each, per partner and currency:
 *
 * - paid + approved + pending − clawed back = the sum of the commissions' current values
 *   (what each commission is worth now: its amount while pending, approved or paid — or once paid,
 *   whatever happened since — plus its adjustments);
 * - the money the payouts sent (those not failed) = paid − the claw-backs payouts settled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
let owner: Record<string, string>;

beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
});
afterAll(() => s?.close());

const json = () => ({ ...owner, origin: s.url });
let n = 0;
async function sold(link: string, amount: number, currency: string): Promise<{ transactionId: string; commissionId: number }> {
  const id = ++n;
  const clickId = await click(s, link);
  await serverLead(s, clickId, `bk-${id}`);
  const transactionId = `bk-${dbKind}-${id}-${Date.now()}`;
  const res = await sale(s, { transaction_id: transactionId, click_id: clickId, amount_cents: amount, currency });
  expect(res.status, res.text).toBe(200);
  return { transactionId, commissionId: res.body.data.commission_id };
}
const refund = (transactionId: string) => s.post('/api/v1/track/refund', { transaction_id: transactionId }, bearer(KEY1));
const approve = (ids: number[]) => s.post('/api/dashboard/programs/1/commissions/approve', { ids }, json());
const decline = (ids: number[]) => s.post('/api/dashboard/programs/1/commissions/decline', { ids, reason: 'test' }, json());
const payout = (partnerId: number, currency: string) => s.post('/api/dashboard/programs/1/payouts', { partner_id: partnerId, currency }, json());
const failPayout = (id: number) => s.raw(`/api/dashboard/payouts/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...json() }, body: JSON.stringify({ status: 'failed' }) });

async function checkBooks(): Promise<void> {
  const balances = (await s.get('/api/dashboard/programs/1/balances', owner)).body.data as Array<{ partner: { id: number }; currency: string; pending_cents: number; approved_cents: number; paid_cents: number; clawed_back_cents: number; open_clawback_cents: number; payable_cents: number }>;
  const ledger: Array<{ partner: { id: number }; currency: string; status: string; amount_cents: number; adjustments_cents: number; payout_id: number | null }> = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: typeof ledger; meta: { next_cursor: string | null } } } = await s.get(`/api/dashboard/programs/1/commissions?limit=200${cursor ? `&cursor=${cursor}` : ''}`, owner);
    ledger.push(...page.body.data);
    cursor = page.body.meta.next_cursor;
  } while (cursor);
  const payouts = (await s.get('/api/dashboard/programs/1/payouts', owner)).body.data as Array<{ partner: { id: number }; currency: string; status: string; amount_cents: number; adjustments_cents: number }>;
  for (const b of balances) {
    const mine = ledger.filter((c) => c.partner.id === b.partner.id && c.currency === b.currency);
    const value = mine.reduce((sum, c) => sum + (['pending', 'approved', 'paid'].includes(c.status) || c.payout_id !== null ? c.amount_cents : 0) + c.adjustments_cents, 0);
    expect(b.paid_cents + b.approved_cents + b.pending_cents - b.clawed_back_cents, `${b.partner.id} ${b.currency}`).toBe(value);
    const sent = payouts.filter((p) => p.partner.id === b.partner.id && p.currency === b.currency && p.status !== 'failed').reduce((sum, p) => sum + p.amount_cents, 0);
    expect(sent, `sent ${b.partner.id} ${b.currency}`).toBe(b.paid_cents - (b.clawed_back_cents - b.open_clawback_cents));
    expect(b.payable_cents).toBe(b.approved_cents - b.open_clawback_cents);
  }
  // No commission is paid by two payouts, and a paid commission always names its payout.
  expect(ledger.filter((c) => c.status === 'paid' && c.payout_id === null)).toEqual([]);
}

describe(`[${dbKind}] the books balance under concurrency`, () => {
  it('approve and refund of the same commission at once: one wins, the books balance', async () => {
    const sales = await Promise.all(Array.from({ length: 12 }, () => sold('sam10', 10_000, 'USD')));
    await Promise.all(sales.flatMap((x) => [approve([x.commissionId]), refund(x.transactionId)]));
    const rows = await s.db('commissions').whereIn('id', sales.map((x) => x.commissionId)).select('status');
    expect(rows.every((r) => r.status === 'reversed')).toBe(true);
    await checkBooks();
  });

  it('payout and refund of the same commissions at once: each refunded commission is either left out or clawed back', async () => {
    const sales = await Promise.all(Array.from({ length: 8 }, () => sold('pat20', 10_000, 'EUR')));
    await approve(sales.map((x) => x.commissionId));
    const [paid] = await Promise.all([payout(1, 'EUR'), ...sales.slice(0, 4).map((x) => refund(x.transactionId))]);
    expect([201, 409]).toContain(paid.status);
    for (const x of sales.slice(0, 4)) {
      const c = await s.db('commissions').where({ id: x.commissionId }).first('status', 'payout_id');
      const adjustments = await s.db('commission_adjustments').where({ commission_id: x.commissionId }).sum({ n: 'amount_cents' }).first();
      expect(c.status).toBe('reversed');
      // Paid before the refund: clawed back in full. Refunded first: never paid.
      if (c.payout_id !== null) expect(Number(adjustments?.n)).toBe(-2000);
      else expect(Number(adjustments?.n ?? 0)).toBe(0);
    }
    await checkBooks();
  });
});

describe(`[${dbKind}] the books balance for random sequences`, () => {
  it('random sales, refunds, approvals, declines, payouts and failed payouts keep the books balanced at every step', async () => {
    let seed = 20261124;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const sales: Array<{ transactionId: string; commissionId: number }> = [];
    const payoutIds: number[] = [];
    for (let step = 0; step < 60; step++) {
      const action = pick(['sale', 'sale', 'refund', 'approve', 'approve', 'decline', 'payout', 'payout', 'fail'] as const);
      if (action === 'sale' || sales.length === 0) {
        sales.push(await sold(pick(['pat20', 'sam10']), pick([1000, 2500, 9999, 40_000]), pick(['USD', 'EUR', 'VND'])));
      } else if (action === 'refund') {
        await refund(pick(sales).transactionId);
      } else if (action === 'approve') {
        await approve([pick(sales).commissionId, pick(sales).commissionId]);
      } else if (action === 'decline') {
        await decline([pick(sales).commissionId]);
      } else if (action === 'payout') {
        const res = await payout(pick([1, 2]), pick(['USD', 'EUR', 'VND']));
        if (res.status === 201) payoutIds.push(res.body.data.id);
        else expect(res.status, res.text).toBe(409);
      } else if (payoutIds.length > 0) {
        const res = await failPayout(pick(payoutIds));
        expect([200, 409]).toContain(res.status);
      }
      await checkBooks();
    }
  });
});
