import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { createAtomic } from '../src/db/atomic.js';
import { createLead } from '../src/domain/lead.js';
import type { ApiError } from '../src/api-error.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const LEAD = '/api/v1/track/lead';
const err400 = (message: string) => ({ data: null, error: { status: 400, name: 'BadRequestError', message, details: {} } });

describe(`[${dbKind}] 4.2 POST /api/v1/track/lead modes`, () => {
  it('server mode: a valid key makes a settled, server-attributed lead', async () => {
    const id = await click(s);
    const res = await s.post(LEAD, { click_id: id, customer_key: 'user-1' }, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { click_id: id, customer_status: 'lead', lead_id: expect.any(Number) } });
    const customer = await s.db('customers').where({ click_id: id }).first();
    expect(customer).toMatchObject({ status: 'lead', customer_key: 'user-1' });
  });

  it('browser mode: no Authorization header', async () => {
    const id = await click(s, 'open1');
    const res = await s.post(LEAD, { click_id: id, customer_key: 'b-1' });
    expect(res.status).toBe(200);
    expect(res.body.provisional).toBeUndefined();
  });

  it('browser mode: a header whose token is empty', async () => {
    const id = await click(s, 'open1');
    const res = await s.post(LEAD, { click_id: id, customer_key: 'b-2' }, { authorization: 'Bearer ' });
    expect(res.status).toBe(200);
    expect(res.body.data.customer_status).toBe('lead');
  });

  it('401 for a token that matches no program', async () => {
    const id = await click(s);
    const res = await s.post(LEAD, { click_id: id }, bearer('aff_wrongwrongwrongwrongwrongwrong00'));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ data: null, error: { status: 401, name: 'UnauthorizedError', message: 'Invalid API token', details: {} } });
    expect((await s.db('customers').where({ click_id: id }).first()).status).toBe('click');
  });

  it('a server-side integration without a click id (user arrived directly) gets 400 and nothing is recorded', async () => {
    const before = await s.db('lead_events').count({ n: '*' }).first();
    const res = await s.post(LEAD, { customer_key: 'direct-visitor' }, bearer(KEY1));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err400('Customer not found. Provide a valid click_id or customer_key.'));
    expect(Number((await s.db('lead_events').count({ n: '*' }).first())!.n)).toBe(Number(before!.n));
  });
});

describe(`[${dbKind}] 7.4 lead errors`, () => {
  it('400 click_id or customer_key is required', async () => {
    const res = await s.post(LEAD, {}, bearer(KEY1));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err400('click_id or customer_key is required'));
  });

  it('400 Customer not found. Provide a valid click_id or customer_key.', async () => {
    const res = await s.post(LEAD, { click_id: 'clk_unknown000000000000000' });
    expect(res.body).toEqual(err400('Customer not found. Provide a valid click_id or customer_key.'));
  });

  it('400 Customer does not belong to this program (server mode)', async () => {
    const id = await click(s, 'pat20');
    const res = await s.post(LEAD, { click_id: id }, bearer(KEY2));
    expect(res.body).toEqual(err400('Customer does not belong to this program'));
  });

  it('400 Customer status cannot be updated to lead. Current status: lead', async () => {
    const id = await click(s);
    await serverLead(s, id, 'twice');
    const res = await s.post(LEAD, { click_id: id, customer_key: 'twice' }, bearer(KEY1));
    expect(res.status).toBe(400);
    expect(res.body).toEqual(err400('Customer status cannot be updated to lead. Current status: lead'));
  });

  it('finds the customer by customer_key alone once a lead carries it', async () => {
    const id = await click(s);
    await serverLead(s, id, 'by-key');
    const res = await s.post(LEAD, { customer_key: 'by-key' }, bearer(KEY1));
    expect(res.body).toEqual(err400('Customer status cannot be updated to lead. Current status: lead'));
  });

  it('a test lead with a key of another program than additional_data.program_id answers 403', async () => {
    const id = await click(s);
    const res = await s.post(LEAD, { click_id: id, additional_data: { test_mode: true, program_id: 2 } }, bearer(KEY1));
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('program_id does not match the API key');
  });

  it('a test lead records a test-flagged lead and leaves the customer alone', async () => {
    const id = await click(s);
    const res = await s.post(LEAD, { click_id: id, customer_key: 'test-user', additional_data: { test_mode: true, program_id: 1 } }, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body.data.test_mode).toBe(true);
    const row = await s.db('lead_events').where({ id: res.body.data.lead_id }).first();
    expect(Boolean(row.is_test)).toBe(true);
    expect((await s.db('customers').where({ click_id: id }).first()).status).toBe('click');
  });
});

describe(`[${dbKind}] 3.1 lead rows`, () => {
  it('click → provisional lead: browser mode on server_required answers provisional, saves no user id, counts nothing', async () => {
    const id = await click(s);
    const pp = await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).first();
    const res = await s.post(LEAD, { click_id: id, customer_key: 'secret-user' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, provisional: true, data: { click_id: id, customer_status: 'click', lead_id: expect.any(Number) } });
    const customer = await s.db('customers').where({ click_id: id }).first();
    expect(customer.status).toBe('click');
    expect(customer.customer_key).toBeNull();
    const lead = await s.db('lead_events').where({ id: res.body.data.lead_id }).first();
    expect(Boolean(lead.provisional)).toBe(true);
    expect(lead.customer_key).toBeNull();
    expect(Number((await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).first()).leads)).toBe(Number(pp.leads));
  });

  it('provisional lead + repeated browser lead: 200 provisional again, nothing new recorded', async () => {
    const id = await click(s);
    const first = await s.post(LEAD, { click_id: id });
    const second = await s.post(LEAD, { click_id: id });
    expect(second.status).toBe(200);
    expect(second.body.provisional).toBe(true);
    expect(second.body.data.lead_id).toBe(first.body.data.lead_id);
    expect(await s.db('lead_events').where({ click_id: id })).toHaveLength(1);
  });

  it('provisional lead + server-mode lead: settled', async () => {
    const id = await click(s);
    const prov = await s.post(LEAD, { click_id: id });
    const res = await s.post(LEAD, { click_id: id, customer_key: 'settle-me' }, bearer(KEY1));
    expect(res.status).toBe(200);
    expect(res.body.provisional).toBeUndefined();
    expect(res.body.data).toEqual({ click_id: id, customer_status: 'lead', lead_id: prov.body.data.lead_id });
    const lead = await s.db('lead_events').where({ id: prov.body.data.lead_id }).first();
    expect(Boolean(lead.provisional)).toBe(false);
    expect(Number(lead.settled_at)).toBeGreaterThan(0);
    expect((await s.db('customers').where({ click_id: id }).first()).customer_key).toBe('settle-me');
  });

  it('provisional lead + sale call: unchanged (a sale does not settle it)', async () => {
    const id = await click(s);
    await s.post(LEAD, { click_id: id });
    const res = await sale(s, { transaction_id: `prov-sale-${dbKind}`, click_id: id });
    expect(res.status).toBe(200);
    const lead = await s.db('lead_events').where({ click_id: id }).first();
    expect(Boolean(lead.provisional)).toBe(true);
    expect((await s.db('customers').where({ click_id: id }).first()).status).toBe('click');
  });

  it('click → lead in browser mode on a browser_allowed program', async () => {
    const id = await click(s, 'open1');
    const res = await s.post(LEAD, { click_id: id, customer_key: 'browser-user' });
    expect(res.body).toEqual({ success: true, data: { click_id: id, customer_status: 'lead', lead_id: expect.any(Number) } });
    const customer = await s.db('customers').where({ click_id: id }).first();
    expect(customer).toMatchObject({ status: 'lead', customer_key: 'browser-user' });
  });

  it('settled lead + repeated browser lead on browser_allowed: 400', async () => {
    const id = await click(s, 'open1');
    await s.post(LEAD, { click_id: id });
    const res = await s.post(LEAD, { click_id: id });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Customer status cannot be updated to lead. Current status: lead');
  });

  it('a settled lead increments the partner-program lead metric', async () => {
    const pp = await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).first();
    const id = await click(s);
    await serverLead(s, id, 'counted');
    expect(Number((await s.db('partner_programs').where({ partner_id: 1, program_id: 1 }).first()).leads)).toBe(Number(pp.leads) + 1);
  });

  it('concurrent server leads for one customer: one settles, the rest answer the status 400', async () => {
    const id = await click(s);
    const answers = await Promise.all(Array.from({ length: 8 }, () => s.post(LEAD, { click_id: id, customer_key: 'race' }, bearer(KEY1))));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 400)).toHaveLength(7);
    expect(await s.db('lead_events').where({ click_id: id, is_test: false })).toHaveLength(1);
  });

  // The transactional path (the Stripe intake, the synthetic chains; every lead on SQLite) reads
  // the customer and then moves it from `click` only if it is still there: on PostgreSQL
  // concurrent units all read `click`, and the guard is what leaves one lead.
  it('concurrent leads on the transactional path: one settles, the rest are refused with the status 400', async () => {
    const id = await click(s);
    const atomic = createAtomic(s.db);
    const input = { clickId: id, customerKey: 'race-unit', email: null, sessionId: null, pageUrl: null };
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => createLead(atomic, 1, input, 'server', Date.now())));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ApiError).status).toBe(400);
    expect(await s.db('lead_events').where({ click_id: id, is_test: false })).toHaveLength(1);
    expect(await s.db('customers').where({ click_id: id }).first('status')).toEqual({ status: 'lead' });
  });
});
