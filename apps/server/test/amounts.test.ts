/**
 * Amounts (docs/security.md, "Amounts"): a sale's `amount_cents` is at most LIMITS.maxAmountMinor
 * (10^12 minor units); beyond it the spec's own invalid-amount answer. Within the bounds every
 * amount, commission, fee and total is an exact integer on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@reftrack/contract';
import type { Fixture } from '../src/seed/fixture.js';
import { bearer, dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { signInAs } from './helpers/accounts.js';

const KEY = 'aff_amounts0123456789abcdefghijABCDEF';

/** Program 1 pays 12.5% of every sale; partner 1 is enrolled through link `big`. */
function fixture(): Fixture {
  return {
    accounts: [{ email: 'owner@acme.test', name: 'Ada Owner' }],
    workspaces: [{ id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }] }],
    programs: [{ id: 1, workspace: 1, name: 'Big', domain: 'big.test', commission_type: 'recurring_percent', commission_rate: 12.5, api_key: KEY }],
    partners: [{ id: 1, name: 'Pat', email: 'pat@p.test', code: 'pat' }],
    enrollments: [{ partner: 1, program: 1 }],
    links: [{ short_link: 'big', partner: 1, program: 1, active: true }],
  };
}

let s: TestServer;
let customerKey: string;
beforeAll(async () => {
  s = await startTestServer({ fixture: fixture() });
  const clickRes = await s.post('/api/v1/track/click', { affiliate_url: 'https://big.test/?aff=big' });
  customerKey = `whale-${dbKind}`;
  const lead = await s.post('/api/v1/track/lead', { click_id: clickRes.body.click_id, customer_key: customerKey }, bearer(KEY));
  expect(lead.status, lead.text).toBe(200);
});
afterAll(() => s?.close());

let n = 0;
const sell = (amount: number) => s.post('/api/v1/track/sale', { transaction_id: `amt-${dbKind}-${++n}-${Date.now()}`, amount_cents: amount, customer_key: customerKey }, bearer(KEY));
const metrics = async () => {
  const row = await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).first('sales', 'revenue_cents');
  return { sales: Number(row.sales), revenue: Number(row.revenue_cents) };
};
const INVALID_AMOUNT = { data: null, error: { status: 400, name: 'BadRequestError', message: 'amount_cents is required and must be a positive integer', details: {}, code: 'invalid_request' } };

describe(`[${dbKind}] amounts: the largest sale`, () => {
  it(`amount_cents above ${LIMITS.maxAmountMinor} answers the spec's invalid-amount 400 and stores nothing`, async () => {
    const sales = Number((await s.db('sale_events').count({ n: '*' }).first())!.n);
    for (const amount of [LIMITS.maxAmountMinor + 1, 2 ** 53 - 1, 2 ** 53, 1e300]) {
      const res = await sell(amount);
      expect(res.status, String(amount)).toBe(400);
      expect(res.body).toEqual(INVALID_AMOUNT);
    }
    expect(Number((await s.db('sale_events').count({ n: '*' }).first())!.n)).toBe(sales);
  });

  it('the largest amount is recorded with an exact commission and fee', async () => {
    const res = await sell(LIMITS.maxAmountMinor);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.commission_amount_cents).toBe(125_000_000_000);
    const fee = await s.db('platform_fees').where({ sale_id: res.body.data.sale_id }).first('amount_cents');
    expect(Number(fee.amount_cents)).toBe(25_000_000_000);
  });
});

describe(`[${dbKind}] amounts: totals stay exact`, () => {
  it('three sales of the largest amount add up exactly in the partner’s revenue', async () => {
    const before = await metrics();
    for (let i = 0; i < 3; i++) expect((await sell(LIMITS.maxAmountMinor)).status).toBe(200);
    const after = await metrics();
    expect(after.sales - before.sales).toBe(3);
    expect(after.revenue - before.revenue).toBe(3 * LIMITS.maxAmountMinor);
  });

  it('a running total never passes 2^53 − 1: the metric stops and the sale is still recorded', async () => {
    await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).update({ revenue_cents: Number.MAX_SAFE_INTEGER - 10 });
    const before = await metrics();
    const res = await sell(100);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.commission_amount_cents).toBe(13);
    expect(await metrics()).toEqual(before);
    await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).update({ revenue_cents: 0 });
  });
});

describe(`[${dbKind}] amounts: commission rates`, () => {
  it(`a percent rate above ${LIMITS.percentCommissionRateMax} is refused, on creation and when an update makes one`, async () => {
    const cookie = await signInAs(s, 'owner@acme.test');
    const create = (body: Record<string, unknown>) => s.post('/api/dashboard/programs', { workspace_id: 1, name: 'P', domain: 'p.test', ...body }, cookie);
    const refused = await create({ commission_type: 'percent', commission_rate: LIMITS.percentCommissionRateMax + 1 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(`commission_rate of a percent commission type must be at most ${LIMITS.percentCommissionRateMax}`);
    expect((await create({ commission_type: 'recurring_percent', commission_rate: LIMITS.percentCommissionRateMax })).status).toBe(201);
    const fixed = await create({ commission_type: 'fixed', commission_rate: 5000 });
    expect(fixed.status).toBe(201);
    const patch = (body: Record<string, unknown>) => s.raw(`/api/dashboard/programs/${fixed.body.data.id}`, { method: 'PATCH', headers: { ...cookie, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await patch({ commission_type: 'percent' })).status).toBe(400);
    expect((await s.db('programs').where({ id: fixed.body.data.id }).first('commission_type')).commission_type).toBe('fixed');
    expect((await patch({ commission_type: 'percent', commission_rate: 25 })).status).toBe(200);
  });

  it('the CLI init refuses it with the same message', async () => {
    const start = await s.post('/api/v1/cli/auth/start', {});
    const { signDevToken } = await import('../src/auth/id-token.js');
    await s.post('/api/v1/cli/auth/callback', { state: start.body.data.state, id_token: await signDevToken(s.db, 'owner@acme.test') });
    const token = (await s.get(`/api/v1/cli/auth/poll?state=${start.body.data.state}`)).body.data.token as string;
    const res = await s.post('/api/v1/cli/init', { name: 'P', domain: 'p.test', commission_type: 'percent', commission_rate: 5000 }, bearer(token));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`commission_rate of a percent commission type must be at most ${LIMITS.percentCommissionRateMax}`);
  });
});
