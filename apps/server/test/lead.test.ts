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

/**
 * On PostgreSQL the route's leads that arrive while others are being written go together: one
 * read and one write for the group (domain/lead.ts, commitLeads). Each keeps its own answer.
 */
describe.skipIf(dbKind !== 'postgres')('[postgres] 4.2 leads that arrive together', () => {
  const leadsOf = async (partner: number, program: number) => Number((await s.db('partner_programs').where({ partner_id: partner, program_id: program }).first()).leads);

  it('each lead of a group gets its own answer; only answered leads are stored, counted and announced', async () => {
    const pat = await Promise.all(Array.from({ length: 6 }, () => click(s)));
    const sam = await Promise.all(Array.from({ length: 4 }, () => click(s, 'sam10')));
    const elsewhere = await click(s, 'open1');
    const already = await click(s);
    await serverLead(s, already, 'group-already');
    const browser = await click(s);
    const settling = await click(s);
    const provisional = await s.post(LEAD, { click_id: settling });
    const before = { pat: await leadsOf(1, 1), sam: await leadsOf(2, 1) };
    const stamp = Date.now();
    const plain = [...pat, ...sam];
    const calls: Array<{ body: Record<string, unknown>; key?: string }> = [
      ...plain.map((id, i) => ({ body: { click_id: id, customer_key: `group-${stamp}-${i}`, email: `G${i}@Example.test` }, key: KEY1 })),
      { body: { click_id: 'clk_nobody_has_this_one' }, key: KEY1 },
      { body: { click_id: elsewhere, customer_key: 'group-elsewhere' }, key: KEY1 },
      { body: { click_id: already, customer_key: 'group-again' }, key: KEY1 },
      { body: { click_id: browser, customer_key: 'group-browser' } },
      { body: { click_id: settling, customer_key: `group-settle-${stamp}` }, key: KEY1 },
    ];
    const answers = await Promise.all(calls.map((c) => s.post(LEAD, c.body, c.key ? bearer(c.key) : {})));
    const plainAnswers = answers.slice(0, plain.length);
    plainAnswers.forEach((res, i) => expect(res.body, res.text).toEqual({ success: true, data: { click_id: plain[i], customer_status: 'lead', lead_id: expect.any(Number) } }));
    const [missing, wrongProgram, twice, browserLead, settled] = answers.slice(plain.length);
    expect(missing!.body).toEqual(err400('Customer not found. Provide a valid click_id or customer_key.'));
    expect(wrongProgram!.body).toEqual(err400('Customer does not belong to this program'));
    expect(twice!.body).toEqual(err400('Customer status cannot be updated to lead. Current status: lead'));
    expect(browserLead!.body).toEqual({ success: true, provisional: true, data: { click_id: browser, customer_status: 'click', lead_id: expect.any(Number) } });
    expect(settled!.body).toEqual({ success: true, data: { click_id: settling, customer_status: 'lead', lead_id: provisional.body.data.lead_id } });

    const ids = plainAnswers.map((r) => r.body.data.lead_id as number);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, id] of plain.entries()) {
      const lead = await s.db('lead_events').where({ id: ids[i] }).first();
      expect(lead).toMatchObject({ click_id: id, customer_key: `group-${stamp}-${i}`, email: `g${i}@example.test`, source: 'server' });
      expect(await s.db('customers').where({ click_id: id }).first()).toMatchObject({ status: 'lead', customer_key: `group-${stamp}-${i}`, email: `g${i}@example.test` });
      const events = await s.db('outbox_events').where({ type: 'lead.created' }).andWhere('payload', 'like', `%${id}%`);
      expect(events, id).toHaveLength(1);
    }
    expect(await s.db('customers').where({ click_id: elsewhere }).first()).toMatchObject({ status: 'click' });
    expect(await s.db('lead_events').where({ click_id: elsewhere })).toHaveLength(0);
    expect(await leadsOf(1, 1)).toBe(before.pat + pat.length + 1);
    expect(await leadsOf(2, 1)).toBe(before.sam + sam.length);
  });

  it('a group whose connection is ended mid-write answers 500 for each of its leads, stores none of them, and the next group goes on', async () => {
    const ids = await Promise.all(Array.from({ length: 6 }, () => click(s)));
    const held = ids[3]!;
    // The test's transaction holds the row of one customer: the group that carries its lead waits on it.
    const trx = await s.db.transaction();
    let answers: Awaited<ReturnType<TestServer['post']>>[];
    try {
      await trx('customers').where({ click_id: held }).update({ click_at: Date.now() });
      const pending = Promise.all(ids.map((id, i) => s.post(LEAD, { click_id: id, customer_key: `ended-${Date.now()}-${i}` }, bearer(KEY1))));
      let waiting: { pid: number } | undefined;
      for (let tries = 0; !waiting && tries < 200; tries++) {
        const rows = (await s.db.raw(`select pid from pg_stat_activity where wait_event_type = 'Lock' and query like '%update customers c set status = ''lead''%'`)) as { rows: Array<{ pid: number }> };
        waiting = rows.rows[0];
        if (!waiting) await new Promise((r) => setTimeout(r, 20));
      }
      expect(waiting, 'the group waits on the held customer').toBeDefined();
      await s.db.raw('select pg_terminate_backend(?)', [waiting!.pid]);
      answers = await pending;
    } finally {
      await trx.rollback();
    }
    expect(answers[3]!.status, answers[3]!.text).toBe(500);
    for (const [i, res] of answers.entries()) {
      expect([200, 500], res.text).toContain(res.status);
      expect(res.text).not.toContain('terminating');
      const stored = await s.db('lead_events').where({ click_id: ids[i] });
      expect(stored, `${i}`).toHaveLength(res.status === 200 ? 1 : 0);
      expect(await s.db('customers').where({ click_id: ids[i] }).first('status'), `${i}`).toEqual({ status: res.status === 200 ? 'lead' : 'click' });
    }
    // Answered 500 and not written: sending it again records it.
    expect((await s.post(LEAD, { click_id: held, customer_key: `ended-again-${Date.now()}` }, bearer(KEY1))).status).toBe(200);
  });

  it('a statement PostgreSQL refuses costs the rest of the group nothing: each lead is decided again on its own', async () => {
    await s.db.raw(`create function refuse_marked_lead() returns trigger language plpgsql as $$
      begin if new.customer_key = 'refuse-me' then raise exception 'refused for the test'; end if; return new; end $$`);
    await s.db.raw('create trigger refuse_marked_lead before insert on lead_events for each row execute function refuse_marked_lead()');
    try {
      const ids = await Promise.all(Array.from({ length: 9 }, () => click(s)));
      const keys = ids.map((_, i) => (i === 4 ? 'refuse-me' : `refuse-not-${Date.now()}-${i}`));
      const answers = await Promise.all(ids.map((id, i) => s.post(LEAD, { click_id: id, customer_key: keys[i] }, bearer(KEY1))));
      answers.forEach((res, i) => expect(res.status, `${i}: ${res.text}`).toBe(i === 4 ? 500 : 200));
      expect(answers[4]!.text).not.toContain('refused for the test');
      expect(await s.db('customers').where({ click_id: ids[4] }).first()).toMatchObject({ status: 'click', customer_key: null });
      expect(await s.db('lead_events').where({ click_id: ids[4] })).toHaveLength(0);
      for (const [i, id] of ids.entries()) if (i !== 4) expect(await s.db('lead_events').where({ click_id: id, customer_key: keys[i] })).toHaveLength(1);
    } finally {
      await s.db.raw('drop trigger refuse_marked_lead on lead_events');
      await s.db.raw('drop function refuse_marked_lead()');
    }
  });
});
