import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const REFUND = '/api/v1/track/refund';
let n = 0;
const refundError = (status: number, name: string, code: string, message: string) => ({ data: null, error: { status, name, message, details: {}, code } });

async function soldSale(): Promise<{ transactionId: string; saleId: number; commissionId: number }> {
  const clickId = await click(s);
  await serverLead(s, clickId, `r-${++n}`);
  const transactionId = `refund-${dbKind}-${n}-${Date.now()}`;
  const res = await sale(s, { transaction_id: transactionId, click_id: clickId });
  return { transactionId, saleId: res.body.data.sale_id, commissionId: res.body.data.commission_id };
}

describe(`[${dbKind}] 4.4 POST /api/v1/track/refund`, () => {
  it('reverses a pending commission', async () => {
    const { transactionId, saleId, commissionId } = await soldSale();
    const res = await s.post(REFUND, { transaction_id: transactionId, reason: 'refund', refund_reason: 'customer asked' }, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { refund_id: expect.any(Number), sale_id: saleId, transaction_id: transactionId, reason: 'refund', commission_id: commissionId, commission_status: 'reversed', adjustment_amount_cents: 0 } });
    expect((await s.db('commissions').where({ id: commissionId }).first()).status).toBe('reversed');
    expect((await s.db('platform_fees').where({ commission_id: commissionId }).first()).status).toBe('reversed');
  });

  it('claws back a paid commission with a negative adjustment (chargeback)', async () => {
    const { transactionId, commissionId } = await soldSale();
    await s.db('commissions').where({ id: commissionId }).update({ status: 'paid' });
    const res = await s.post(REFUND, { transaction_id: transactionId, reason: 'chargeback' }, bearer(KEY1));
    expect(res.body.data).toMatchObject({ reason: 'chargeback', commission_status: 'reversed', adjustment_amount_cents: -2000 });
    const adjustments = await s.db('commission_adjustments').where({ commission_id: commissionId });
    expect(adjustments.map((a) => Number(a.amount_cents))).toEqual([-2000]);
  });

  it('a repeated refund answers the first one and changes nothing', async () => {
    const { transactionId } = await soldSale();
    const first = await s.post(REFUND, { transaction_id: transactionId }, bearer(KEY1));
    const again = await s.post(REFUND, { transaction_id: transactionId, reason: 'chargeback' }, bearer(KEY1));
    expect(again.status).toBe(200);
    expect(again.body.data.refund_id).toBe(first.body.data.refund_id);
    expect(await s.db('refunds').where({ sale_id: first.body.data.sale_id })).toHaveLength(1);
  });

  it('404 Sale not found for transaction_id (unknown, or another program’s sale)', async () => {
    const { transactionId } = await soldSale();
    const unknown = await s.post(REFUND, { transaction_id: 'never-sold' }, bearer(KEY1));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(refundError(404, 'NotFoundError', 'not_found', 'Sale not found for transaction_id'));
    const other = await s.post(REFUND, { transaction_id: transactionId }, bearer(KEY2));
    expect(other.status).toBe(404);
  });

  it('400 transaction_id is required', async () => {
    const res = await s.post(REFUND, { reason: 'refund' }, bearer(KEY1));
    expect(res.body).toEqual(refundError(400, 'BadRequestError', 'invalid_request', 'transaction_id is required'));
  });

  it('400 reason must be refund or chargeback', async () => {
    const res = await s.post(REFUND, { transaction_id: 'x', reason: 'fraud' }, bearer(KEY1));
    expect(res.body).toEqual(refundError(400, 'BadRequestError', 'invalid_request', 'reason must be refund or chargeback'));
  });
});

describe(`[${dbKind}] 5.3 header parsing on refund`, () => {
  it('401 malformed header', async () => {
    const res = await s.post(REFUND, { transaction_id: 'x' }, { authorization: 'Token abc' });
    expect(res.body).toEqual(refundError(401, 'UnauthorizedError', 'unauthorized', 'Missing or malformed Authorization header. Expected: Bearer <token>'));
  });
  it('401 Invalid API token for an empty token', async () => {
    const res = await s.post(REFUND, { transaction_id: 'x' }, { authorization: 'Bearer    ' });
    expect(res.body).toEqual(refundError(401, 'UnauthorizedError', 'unauthorized', 'Invalid API token'));
  });
});
