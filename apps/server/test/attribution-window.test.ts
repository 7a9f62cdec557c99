/**
 * The attribution window of 3.1 at its exact edge. A sale is attributed when the customer's first
 * click is at most `attribution_window_days` older than the signup (the lead time; for a settled
 * provisional lead, the provisional lead's time), or than the payment (`occurred_at`, else now) when
 * there is no signup (docs/decisions.md, "Attribution window"). Exactly N days attributes; N days and
 * one millisecond does not.
 *
 * The server runs on a stopped clock (`s.clock.at`): the click, the lead and the sale each happen at
 * an instant the test sets, so no boundary depends on how long a request takes.
 */
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());
afterEach(() => {
  s.clock.at = null;
});

const DAY = 86_400_000;
/** Program 1 (link pat20): server_required, window 60 days. Program 2 (link open1): browser_allowed, window 30 days. */
const WINDOW_1 = 60 * DAY;
const WINDOW_2 = 30 * DAY;
let n = 0;
const txn = () => `aw-${dbKind}-${++n}-${Date.now()}`;
const iso = (ms: number) => new Date(ms).toISOString();
const NOT_ATTRIBUTED = { attributed: false, reason: 'attribution_window_expired' };

/** A click at `t0` (this test's own instant, on a whole second plus a few ms). */
async function clickAt(aff = 'pat20'): Promise<{ clickId: string; t0: number }> {
  const t0 = Math.floor(Date.now() / 1000) * 1000 + 7 + n;
  s.clock.at = t0;
  const clickId = await click(s, aff);
  const customer = await s.db('customers').where({ click_id: clickId }).first('click_at');
  expect(Number(customer.click_at)).toBe(t0);
  return { clickId, t0 };
}

async function browserLead(clickId: string) {
  const res = await s.post('/api/v1/track/lead', { click_id: clickId });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** An attributed sale: stored with its commission and fee, and the customer converted. */
async function expectAttributed(res: Awaited<ReturnType<typeof sale>>, clickId: string) {
  expect(res.status, res.text).toBe(200);
  expect(res.body.data).toMatchObject({ attributed: true, sale_id: expect.any(Number), commission_id: expect.any(Number) });
  expect(await s.db('sale_events').where({ id: res.body.data.sale_id })).toHaveLength(1);
  expect(await s.db('commissions').where({ sale_id: res.body.data.sale_id })).toHaveLength(1);
  expect(await s.db('platform_fees').where({ sale_id: res.body.data.sale_id })).toHaveLength(1);
  const customer = await s.db('customers').where({ click_id: clickId }).first('converted_at');
  expect(customer.converted_at).not.toBeNull();
}

/** A sale outside the window: 200 `attributed: false`, and nothing recorded. */
async function expectNotAttributed(res: Awaited<ReturnType<typeof sale>>, clickId: string, transactionId: string) {
  expect(res.status, res.text).toBe(200);
  expect(res.body.data).toEqual(NOT_ATTRIBUTED);
  expect(await s.db('sale_events').where({ processor_event_id: transactionId })).toHaveLength(0);
  const customer = await s.db('customers').where({ click_id: clickId }).first('id', 'converted_at');
  expect(customer.converted_at).toBeNull();
  expect(await s.db('commissions').where({ customer_id: customer.id })).toHaveLength(0);
}

describe(`[${dbKind}] 3.1 sale rows: the attribution window to the millisecond`, () => {
  it(`no signup: a sale (no occurred_at) exactly attribution_window_days after the click is attributed`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: clickId }), clickId);
  });

  it(`no signup: a sale (no occurred_at) attribution_window_days and 1 ms after the click is not`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1 + 1;
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: clickId }), clickId, t);
  });

  it(`no signup: occurred_at exactly attribution_window_days after the click is attributed, though the call comes later`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1 + 10 * 60_000;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: clickId, occurred_at: iso(t0 + WINDOW_1) }), clickId);
  });

  it(`no signup: occurred_at attribution_window_days and 1 ms after the click is not, though the call comes earlier`, async () => {
    const { clickId, t0 } = await clickAt();
    // The call itself is inside the window; the payment (up to 5 minutes ahead is allowed) is not.
    s.clock.at = t0 + WINDOW_1 - 60_000;
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: clickId, occurred_at: iso(t0 + WINDOW_1 + 1) }), clickId, t);
  });

  it(`the window is the program's own: exactly 30 days attributes on a 30-day program, 30 days and 1 ms does not`, async () => {
    const inside = await clickAt('open1');
    s.clock.at = inside.t0 + WINDOW_2;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: inside.clickId }, KEY2), inside.clickId);
    const outside = await clickAt('open1');
    s.clock.at = outside.t0 + WINDOW_2 + 1;
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: outside.clickId }, KEY2), outside.clickId, t);
  });

  it(`the window runs from the first click: a later click reusing the click id does not move it`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + 30 * DAY;
    expect(await click(s, 'pat20', { existing_click_id: clickId })).toBe(clickId);
    s.clock.at = t0 + WINDOW_1 + 1;
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: clickId }), clickId, t);
  });

  it(`signup: a server lead exactly attribution_window_days after the click: a much later sale is attributed`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1;
    await serverLead(s, clickId, `aw-lead-${++n}`);
    s.clock.at = t0 + WINDOW_1 + 45 * DAY;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: clickId }), clickId);
  });

  it(`signup: a server lead attribution_window_days and 1 ms after the click: the sale is not attributed, even with a payment inside the window`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1 + 1;
    await serverLead(s, clickId, `aw-lead-${++n}`);
    // The payment alone would be inside the window; with a signup, the signup decides.
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: clickId, occurred_at: iso(t0 + WINDOW_1) }), clickId, t);
  });

  it(`signup: a browser lead (browser_allowed program) exactly at the window attributes; 1 ms later does not`, async () => {
    const inside = await clickAt('open1');
    s.clock.at = inside.t0 + WINDOW_2;
    expect((await browserLead(inside.clickId)).data.customer_status).toBe('lead');
    s.clock.at = inside.t0 + WINDOW_2 + 20 * DAY;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: inside.clickId }, KEY2), inside.clickId);

    const outside = await clickAt('open1');
    s.clock.at = outside.t0 + WINDOW_2 + 1;
    expect((await browserLead(outside.clickId)).data.customer_status).toBe('lead');
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: outside.clickId }, KEY2), outside.clickId, t);
  });

  it(`signup: a provisional lead exactly at the window, settled later by the server: measured to the provisional lead, attributed`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1;
    expect((await browserLead(clickId)).provisional).toBe(true);
    s.clock.at = t0 + WINDOW_1 + 15 * DAY;
    await serverLead(s, clickId, `aw-prov-${++n}`);
    const customer = await s.db('customers').where({ click_id: clickId }).first('lead_at');
    expect(Number(customer.lead_at)).toBe(t0 + WINDOW_1);
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: clickId }), clickId);
  });

  it(`signup: a provisional lead attribution_window_days and 1 ms after the click, settled later: not attributed`, async () => {
    const { clickId, t0 } = await clickAt();
    s.clock.at = t0 + WINDOW_1 + 1;
    expect((await browserLead(clickId)).provisional).toBe(true);
    s.clock.at = t0 + WINDOW_1 + 2 * DAY;
    await serverLead(s, clickId, `aw-prov-${++n}`);
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: clickId }), clickId, t);
  });

  it(`no signup: an unsettled provisional lead is not a signup, the payment decides (exactly at the window attributes, 1 ms later does not)`, async () => {
    const outside = await clickAt();
    s.clock.at = outside.t0 + DAY;
    expect((await browserLead(outside.clickId)).provisional).toBe(true);
    s.clock.at = outside.t0 + WINDOW_1 + 1;
    const t = txn();
    await expectNotAttributed(await sale(s, { transaction_id: t, click_id: outside.clickId }), outside.clickId, t);

    const inside = await clickAt();
    s.clock.at = inside.t0 + DAY;
    expect((await browserLead(inside.clickId)).provisional).toBe(true);
    s.clock.at = inside.t0 + WINDOW_1;
    await expectAttributed(await sale(s, { transaction_id: txn(), click_id: inside.clickId }), inside.clickId);
  });
});
