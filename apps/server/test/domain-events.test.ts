/**
 * Domain events (docs/architecture.md, "Domain events"): every state change the domain core makes
 * writes its event to the outbox in the same transaction — with the payload the contract types,
 * and nothing for test records or refusals.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DOMAIN_EVENT_VERSIONS, type DomainEventType } from '@reftrack/contract';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

let n = 0;
let mark = 0;
beforeEach(async () => {
  mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
});

interface Row {
  event_id: string;
  type: DomainEventType;
  version: number;
  program_id: number | null;
  workspace_id: number | null;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- payloads are checked field by field
  actor: unknown;
}

/** Events written since the test began, in order (click batches left out). */
async function eventsSince(): Promise<Row[]> {
  const rows = await s.db('outbox_events').where('id', '>', mark).whereNot({ type: 'clicks.recorded' }).orderBy('id');
  return rows.map((r) => ({ event_id: r.event_id, type: r.type, version: Number(r.version), program_id: r.program_id == null ? null : Number(r.program_id), workspace_id: r.workspace_id == null ? null : Number(r.workspace_id), data: JSON.parse(r.payload), actor: r.actor == null ? null : JSON.parse(r.actor) }));
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe(`[${dbKind}] domain events: the envelope`, () => {
  it('an event has a time-ordered evt_ id, its type’s version, the program and its workspace; tracking has no actor', async () => {
    await serverLead(s, await click(s), `env-${++n}`);
    const [event] = await eventsSince();
    expect(event.event_id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    expect(event).toMatchObject({ type: 'lead.created', version: DOMAIN_EVENT_VERSIONS['lead.created'], program_id: 1, workspace_id: 1, actor: null });
  });
});

describe(`[${dbKind}] domain events: 4.2 leads`, () => {
  it('a server lead writes lead.created, settled, with the customer key and partner', async () => {
    const clickId = await click(s);
    const res = await serverLead(s, clickId, `lead-${++n}`);
    const events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['lead.created']);
    const customer = await s.db('customers').where({ click_id: clickId }).first('partner_id');
    expect(events[0].data.lead).toEqual({
      id: res.data.lead_id,
      program_id: 1,
      click_id: clickId,
      customer_key: `lead-${n}`,
      partner_id: Number(customer.partner_id),
      provisional: false,
      source: 'server',
      created_at: expect.stringMatching(ISO),
      settled_at: expect.stringMatching(ISO),
    });
  });

  it('a browser lead under server_required writes a provisional lead.created once; the server lead then writes lead.settled', async () => {
    const clickId = await click(s);
    const first = await s.post('/api/v1/track/lead', { click_id: clickId });
    await s.post('/api/v1/track/lead', { click_id: clickId });
    let events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['lead.created']);
    expect(events[0].data.lead).toMatchObject({ id: first.body.data.lead_id, provisional: true, source: 'browser', customer_key: null, settled_at: null });
    await serverLead(s, clickId, `settle-${++n}`);
    events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'lead.settled']);
    expect(events[1].data.lead).toMatchObject({ id: first.body.data.lead_id, provisional: false, source: 'server', customer_key: `settle-${n}`, settled_at: expect.stringMatching(ISO) });
  });

  it('a refused lead and a test-mode lead write nothing', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `twice-${++n}`);
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    expect((await s.post('/api/v1/track/lead', { click_id: clickId, customer_key: 'again' }, bearer(KEY1))).status).toBe(400);
    expect((await s.post('/api/v1/track/lead', { customer_key: 'x', additional_data: { test_mode: true } }, bearer(KEY1))).status).toBe(200);
    expect(await eventsSince()).toEqual([]);
  });
});

describe(`[${dbKind}] domain events: 4.3 sales and commissions`, () => {
  it('an attributed sale writes sale.created and commission.created, matching the answer', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `sale-${++n}`);
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    const transactionId = `ev-${dbKind}-${n}-${Date.now()}`;
    const res = await sale(s, { transaction_id: transactionId, click_id: clickId, amount_cents: 12_345 });
    expect(res.status, res.text).toBe(200);
    const events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['sale.created', 'commission.created']);
    expect(events[0].data.sale).toMatchObject({ id: res.body.data.sale_id, program_id: 1, transaction_id: transactionId, amount_cents: 12_345, currency: 'USD', click_id: clickId, customer_key: `sale-${n}`, is_recurring: false, occurred_at: expect.stringMatching(ISO) });
    expect(events[1].data.commission).toMatchObject({ id: res.body.data.commission_id, sale_id: res.body.data.sale_id, amount_cents: res.body.data.commission_amount_cents, currency: 'USD', status: 'pending' });
    expect(events[1].data.commission.partner_id).toBe(events[0].data.sale.partner_id);
  });

  it('a test sale, a duplicate and an unattributed sale write nothing', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `none-${++n}`);
    const transactionId = `dup-${dbKind}-${n}-${Date.now()}`;
    await sale(s, { transaction_id: transactionId, click_id: clickId });
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    expect((await sale(s, { transaction_id: transactionId, click_id: clickId })).status).toBe(409);
    expect((await sale(s, { additional_data: { test_mode: true } })).status).toBe(200);
    const old = await click(s);
    await serverLead(s, old, `old-${++n}`);
    await s.db('customers').where({ click_id: old }).update({ lead_at: Date.now(), click_at: Date.now() - 61 * 86_400_000 });
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    expect((await sale(s, { transaction_id: `late-${n}-${Date.now()}`, click_id: old })).body.data).toMatchObject({ attributed: false });
    expect(await eventsSince()).toEqual([]);
  });

  it('a sale that fails after its insert leaves no event behind (one transaction)', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `fail-${++n}`);
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    s.faults.afterSaleInsert = () => {
      throw new Error('injected');
    };
    try {
      expect((await sale(s, { transaction_id: `fail-${dbKind}-${n}-${Date.now()}`, click_id: clickId })).status).toBe(500);
    } finally {
      delete s.faults.afterSaleInsert;
    }
    expect(await eventsSince()).toEqual([]);
  });
});

describe(`[${dbKind}] domain events: 4.4 refunds`, () => {
  it('a refund writes sale.refunded and commission.updated (pending → reversed); a repeat writes nothing', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `refund-${++n}`);
    const transactionId = `rf-${dbKind}-${n}-${Date.now()}`;
    const sold = await sale(s, { transaction_id: transactionId, click_id: clickId });
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    const res = await s.post('/api/v1/track/refund', { transaction_id: transactionId, reason: 'chargeback' }, bearer(KEY1));
    expect(res.status, res.text).toBe(200);
    const events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['sale.refunded', 'commission.updated']);
    expect(events[0].data).toMatchObject({
      sale: { id: sold.body.data.sale_id, transaction_id: transactionId },
      refund: { id: res.body.data.refund_id, reason: 'chargeback', amount_cents: 10_000, currency: 'USD', transaction_id: transactionId },
      commission: { id: sold.body.data.commission_id, status: 'reversed' },
    });
    expect(events[1].data).toMatchObject({ commission: { id: sold.body.data.commission_id, status: 'reversed' }, previous_status: 'pending' });
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    await s.post('/api/v1/track/refund', { transaction_id: transactionId }, bearer(KEY1));
    expect(await eventsSince()).toEqual([]);
  });

  it('a refund of a sale without commission (a percent program pays the first sale only) writes sale.refunded with commission null', async () => {
    const clickId = await click(s);
    await serverLead(s, clickId, `plain-${++n}`);
    await sale(s, { transaction_id: `first-${dbKind}-${n}-${Date.now()}`, click_id: clickId });
    const transactionId = `second-${dbKind}-${n}-${Date.now()}`;
    const second = await sale(s, { transaction_id: transactionId, click_id: clickId });
    expect(second.body.data.commission_id).toBeNull();
    mark = Number((await s.db('outbox_events').max({ m: 'id' }).first())?.m ?? 0);
    await s.post('/api/v1/track/refund', { transaction_id: transactionId }, bearer(KEY1));
    const events = await eventsSince();
    expect(events.map((e) => e.type)).toEqual(['sale.refunded']);
    expect(events[0].data.commission).toBeNull();
  });
});
