import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, KEY2, startTestServer, type TestServer } from './helpers/index.js';
import { click } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const CLICK = '/api/v1/track/click';
const CHROME_MAC = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describe(`[${dbKind}] 4.1 POST /api/v1/track/click`, () => {
  it('answers the flat success body with click_id, partner_code and cookie_window_days', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, click_id: expect.stringMatching(/^clk_[0-9A-Za-z]{20,}$/), partner_code: 'pat', cookie_window_days: 60 });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('issues click ids that sort in the order of their clicks, with 24 random characters after the time', async () => {
    const first = await click(s, 'pat20');
    await new Promise((r) => setTimeout(r, 5));
    const second = await click(s, 'pat20');
    expect(first).toMatch(/^clk_[0-9A-Za-z]{7}[0-9A-Za-z]{24}$/);
    expect(second.slice(0, 11) > first.slice(0, 11)).toBe(true);
    expect(second.slice(11)).not.toBe(first.slice(11));
  });

  it('rule 1: extracts aff from anywhere in the query string', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/a/b?utm_source=x&aff=sam10#frag' });
    expect(res.body.partner_code).toBe('sam');
  });

  it('rule 2: stores the click with device, OS and browser parsed from the user-agent field', async () => {
    const id = await click(s, 'pat20', { user_agent: IPHONE, page_url: 'https://acme.test/pricing', referrer_url: 'https://blog.test/', session_id: 'sess-1', language: 'en-GB', timezone: 'Europe/London', screen_resolution: '390x844', viewport_size: '390x700', page_title: 'Pricing' });
    const row = await s.db('click_events').where({ click_id: id }).first();
    expect(row).toMatchObject({ device_type: 'mobile', device_os: 'iOS', browser_name: 'Mobile Safari', page_url: 'https://acme.test/pricing', referrer_url: 'https://blog.test/', session_id: 'sess-1', language: 'en-GB', timezone: 'Europe/London', screen_resolution: '390x844', viewport_size: '390x700', page_title: 'Pricing' });
  });

  it('rule 2: falls back to the User-Agent header', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'user-agent': CHROME_MAC });
    const row = await s.db('click_events').where({ click_id: res.body.click_id }).first();
    expect(row).toMatchObject({ device_type: 'desktop', device_os: 'Mac OS', browser_name: 'Chrome' });
  });

  it('rule 2: takes geo from trusted edge headers when TRUST_PROXY is on', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' }, { 'cf-ipcountry': 'DE', 'cf-region-code': 'BE', 'cf-ipcity': 'Berlin' });
    const row = await s.db('click_events').where({ click_id: res.body.click_id }).first();
    expect(row).toMatchObject({ geo_country: 'DE', geo_region: 'BE', geo_city: 'Berlin' });
  });

  it('rule 2: increments the link counters and the partner-program click metrics', async () => {
    const before = await s.db('referral_links').where({ short_link: 'sam10' }).first();
    const pp = await s.db('partner_programs').where({ partner_id: 2, program_id: 1 }).first();
    await click(s, 'sam10');
    await click(s, 'sam10');
    const after = await s.db('referral_links').where({ short_link: 'sam10' }).first();
    const pp2 = await s.db('partner_programs').where({ partner_id: 2, program_id: 1 }).first();
    expect(Number(after.clicks)).toBe(Number(before.clicks) + 2);
    expect(Number(after.last_clicked)).toBeGreaterThan(0);
    expect(Number(pp2.clicks)).toBe(Number(pp.clicks) + 2);
    expect(Number(pp2.last_clicked_at)).toBeGreaterThan(0);
  });

  it('opens CORS without credentials for the browser tracker', async () => {
    const res = await s.raw(CLICK, { method: 'OPTIONS', headers: { origin: 'https://www.acme.test', 'access-control-request-method': 'POST' } });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe(`[${dbKind}] 7.3 click errors`, () => {
  const cases: Array<[string, unknown, string]> = [
    ['affiliate_url missing', {}, 'affiliate_url is required'],
    ['affiliate_url empty', { affiliate_url: '' }, 'affiliate_url is required'],
    ['affiliate_url not a URL', { affiliate_url: 'not a url' }, 'Invalid affiliate_url'],
    ['affiliate_url not a string', { affiliate_url: 42 }, 'Invalid affiliate_url'],
    ['no aff parameter', { affiliate_url: 'https://acme.test/?ref=pat20' }, 'No aff parameter found in affiliate_url'],
    ['unknown link', { affiliate_url: 'https://acme.test/?aff=nobody' }, 'Referral link not found'],
    ['link without partner', { affiliate_url: 'https://acme.test/?aff=nopartner' }, 'Invalid referral link configuration'],
  ];
  for (const [name, body, message] of cases) {
    it(`400 ${message} (${name})`, async () => {
      const res = await s.post(CLICK, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ data: null, error: { status: 400, name: 'BadRequestError', message, details: {} } });
    });
  }

  it('410 link_disabled in the typed body, and no click recorded (3.3)', async () => {
    const before = await s.db('click_events').count({ n: '*' }).first();
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=off' });
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ success: false, message: expect.any(String), error: { code: 'link_disabled', message: expect.any(String), hint: expect.any(String) } });
    expect(res.body.data).toBeUndefined();
    const after = await s.db('click_events').count({ n: '*' }).first();
    expect(Number(after!.n)).toBe(Number(before!.n));
    const link = await s.db('referral_links').where({ short_link: 'off' }).first();
    expect(Number(link.clicks)).toBe(0);
  });

  it('an inactive link turned back on records clicks again (3.3)', async () => {
    await s.db('referral_links').where({ short_link: 'off' }).update({ active: true });
    s.running.deps.links.invalidate('off');
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=off' });
    expect(res.status).toBe(200);
    await s.db('referral_links').where({ short_link: 'off' }).update({ active: false });
    s.running.deps.links.invalidate('off');
  });
});

describe(`[${dbKind}] 3.1 click rows`, () => {
  it('(none) → click: a customer is created with status click, attributed to program and partner', async () => {
    const id = await click(s, 'pat20');
    const customer = await s.db('customers').where({ click_id: id }).first();
    expect(customer).toMatchObject({ status: 'click', program_id: 1, partner_id: 1 });
    const events = await s.db('click_events').where({ click_id: id });
    expect(events).toHaveLength(1);
  });

  it('existing_click_id reuses the customer: first click keeps its partner, the new click is logged for the new partner', async () => {
    const first = await click(s, 'pat20');
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10', existing_click_id: first });
    expect(res.status).toBe(200);
    expect(res.body.click_id).toBe(first);
    expect(res.body.partner_code).toBe('sam');
    const customers = await s.db('customers').where({ click_id: first });
    expect(customers).toHaveLength(1);
    expect(customers[0].partner_id).toBe(1);
    const events = await s.db('click_events').where({ click_id: first }).orderBy('id');
    expect(events.map((e) => e.partner_id)).toEqual([1, 2]);
  });

  it('an unknown existing_click_id gets a new customer and click id', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', existing_click_id: 'clk_doesnotexist000000000' });
    expect(res.body.click_id).not.toBe('clk_doesnotexist000000000');
    expect(await s.db('customers').where({ click_id: res.body.click_id }).first()).toBeTruthy();
  });
});

describe(`[${dbKind}] 4.1 test mode`, () => {
  it('answers message and data {eventId, programId, test_mode} and stores a test-flagged event only', async () => {
    const customersBefore = await s.db('customers').count({ n: '*' }).first();
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', additional_data: { test_mode: true, program_id: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.any(String), data: { eventId: expect.any(Number), programId: 1, test_mode: true } });
    const row = await s.db('click_events').where({ id: res.body.data.eventId }).first();
    expect(Boolean(row.is_test)).toBe(true);
    const customersAfter = await s.db('customers').count({ n: '*' }).first();
    expect(Number(customersAfter!.n)).toBe(Number(customersBefore!.n));
  });

  it('rule 3: 403 when the Bearer key and additional_data.program_id name different programs', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', additional_data: { test_mode: true, program_id: 1 } }, bearer(KEY2));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ data: null, error: { status: 403, name: 'ForbiddenError', message: 'program_id does not match the API key', details: {} } });
  });

  it('rule 3: the matching key is accepted', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', additional_data: { test_mode: true, program_id: 1 } }, bearer(KEY1));
    expect(res.status).toBe(200);
  });

  it('rule 3: a test event without a key is not checked', async () => {
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=open1', additional_data: { test_mode: true, program_id: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.data.programId).toBe(2);
  });
});

describe(`[${dbKind}] 4.1 group commit (design: "The hot write path")`, () => {
  it('a batch that fails answers each of its clicks 500 and leaves none of them, nor their counts, behind', async () => {
    // A trigger refuses one click; whichever concurrent clicks share its batch must fail with it.
    if (dbKind === 'sqlite') {
      await s.db.raw(`create trigger poison_click before insert on click_events when new.session_id = 'poison' begin select raise(abort, 'injected failure'); end`);
    } else {
      await s.db.raw(`create function poison_click() returns trigger language plpgsql as $$ begin if new.session_id = 'poison' then raise exception 'injected failure'; end if; return new; end $$`);
      await s.db.raw(`create trigger poison_click before insert on click_events for each row execute function poison_click()`);
    }
    try {
      const countOf = async () => Number((await s.db('referral_links').where({ short_link: 'pat20' }).first('clicks')).clicks);
      const before = await countOf();
      const sessions = Array.from({ length: 20 }, (_, i) => (i === 10 ? 'poison' : `batch-${i}`));
      const answers = await Promise.all(sessions.map((session_id) => s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', session_id })));
      const poisoned = answers[10];
      expect(poisoned.status).toBe(500);
      expect(poisoned.body).toMatchObject({ data: null, error: { status: 500, message: 'Click tracking failed' } });
      const ok = answers.filter((a) => a.status === 200);
      for (const a of answers) expect([200, 500]).toContain(a.status);
      const stored = await s.db('click_events').whereIn('session_id', sessions).select('click_id');
      expect(stored.map((r) => r.click_id).sort()).toEqual(ok.map((a) => a.body.click_id).sort());
      expect(Number((await s.db('customers').whereIn('click_id', ok.map((a) => a.body.click_id)).count({ n: '*' }).first())!.n)).toBe(ok.length);
      expect(await countOf()).toBe(before + ok.length);
    } finally {
      await s.db.raw('drop trigger poison_click' + (dbKind === 'sqlite' ? '' : ' on click_events'));
      if (dbKind === 'postgres') await s.db.raw('drop function poison_click()');
    }
  });

  it('more clicks at once than one batch holds are split over several batches, each committed with its counters', async () => {
    // A batch goes to the writer as soon as it holds 30 clicks: 150 at once make several batches,
    // some of them committing while the next ones fill.
    const links = ['pat20', 'sam10'] as const;
    const countsOf = async () =>
      Promise.all(links.map(async (short_link) => Number((await s.db('referral_links').where({ short_link }).first('clicks')).clicks)));
    const before = await countsOf();
    const sessions = Array.from({ length: 150 }, (_, i) => `split-${dbKind}-${i}`);
    const answers = await Promise.all(sessions.map((session_id, i) => s.post(CLICK, { affiliate_url: `https://acme.test/?aff=${links[i % 2]}`, session_id })));
    for (const a of answers) expect(a.status).toBe(200);
    const stored = await s.db('click_events').whereIn('session_id', sessions).select('click_id');
    expect(stored.map((r) => r.click_id).sort()).toEqual(answers.map((a) => a.body.click_id).sort());
    expect(await countsOf()).toEqual([before[0] + 75, before[1] + 75]);
  });

  it('a batch whose counter update fails, after its rows were inserted, leaves neither rows nor counts behind', async () => {
    // The counters are the batch's last step (with the commit, on PostgreSQL): a failure there
    // must still take back the inserts made before it.
    const link = await s.db('referral_links').where({ short_link: 'pat20' }).first('partner_id', 'program_id', 'clicks');
    const enrollment = await s.db('partner_programs').where({ partner_id: link.partner_id, program_id: link.program_id }).first('clicks');
    expect(enrollment).toBeDefined();
    if (dbKind === 'sqlite') {
      await s.db.raw(`create trigger poison_counter before update of clicks on partner_programs begin select raise(abort, 'injected failure'); end`);
    } else {
      await s.db.raw(`create function poison_counter() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`);
      await s.db.raw(`create trigger poison_counter before update of clicks on partner_programs for each row execute function poison_counter()`);
    }
    const sessions = Array.from({ length: 5 }, (_, i) => `counter-${dbKind}-${i}`);
    try {
      const answers = await Promise.all(sessions.map((session_id) => s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', session_id })));
      for (const a of answers) expect(a.body).toMatchObject({ data: null, error: { status: 500, message: 'Click tracking failed' } });
    } finally {
      await s.db.raw('drop trigger poison_counter' + (dbKind === 'sqlite' ? '' : ' on partner_programs'));
      if (dbKind === 'postgres') await s.db.raw('drop function poison_counter()');
    }
    expect(await s.db('click_events').whereIn('session_id', sessions)).toHaveLength(0);
    expect(await s.db('partner_programs').where({ partner_id: link.partner_id, program_id: link.program_id }).first('clicks')).toEqual(enrollment);
    expect((await s.db('referral_links').where({ short_link: 'pat20' }).first('clicks')).clicks).toEqual(link.clicks);
    const after = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20', session_id: sessions[0] });
    expect(after.status).toBe(200);
  });
});
