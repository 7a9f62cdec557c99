/**
 * Link requests, the per-link daily chart and payouts' CSV lines in the partner portal
 * (docs/partners.md), with isolation probes of every new portal route: another partner's session,
 * an advertiser's session, none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { startSmtp, type TestSmtp } from './helpers/smtp.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { auditEntries, cookieOf, mailTo, send, settleMail, tokenOf } from './helpers/portal.js';

let s: TestServer;
let smtp: TestSmtp;
let owner: Record<string, string>;
let pat: Record<string, string>;
let sam: Record<string, string>;

const settings = (linkRequestsOpen: boolean) => send(s, 'PUT', '/api/dashboard/programs/1/portal-settings', { applications_open: false, link_requests_open: linkRequestsOpen }, owner);
const ask = (body: Record<string, unknown>, who = pat, partner = 1) => send(s, 'POST', `/api/portal/partners/${partner}/link-requests`, body, who);
const approve = (id: number, body: Record<string, unknown> = {}, who = owner) => s.post(`/api/dashboard/link-requests/${id}/approve`, body, who);
const decline = (id: number, body: Record<string, unknown> = {}, who = owner) => s.post(`/api/dashboard/link-requests/${id}/decline`, body, who);
const count = async (table: string, where: Record<string, unknown>) => Number((await s.db(table).where(where).count({ n: '*' }).first())!.n);

async function portalSession(partnerId: number, email: string): Promise<Record<string, string>> {
  expect((await s.post(`/api/dashboard/partners/${partnerId}/invitations`, { email }, owner)).status).toBe(201);
  const res = await s.post('/api/portal/invitations/accept', { token: tokenOf(await mailTo(s, smtp, email, '/portal/invitation')) });
  expect(res.status, res.text).toBe(200);
  return cookieOf(res);
}

beforeAll(async () => {
  smtp = await startSmtp();
  s = await startTestServer({ fixture: accountsFixture(), env: { SMTP_URL: smtp.url } });
  owner = await signInAs(s, 'owner@acme.test');
  pat = await portalSession(1, 'pat@p.test');
  sam = await portalSession(2, 'sam@p.test');
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});

describe(`[${dbKind}] Link requests`, () => {
  it('a program takes no link requests until the owner allows them (403), and the portal says so per program', async () => {
    const res = await ask({ program_id: 1 });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('This program does not take link requests; ask its owner for a link');
    expect((await s.get('/api/portal/partners/1', pat)).body.data.terms[0].link_requests_open).toBe(false);
    expect((await settings(true)).status).toBe(200);
    expect((await s.get('/api/portal/partners/1', pat)).body.data.terms[0].link_requests_open).toBe(true);
  });

  it('a partner asks for a link with the code they want and a note: 201, pending, in the portal and the dashboard', async () => {
    const res = await ask({ program_id: 1, short_link: 'pat-blog', note: 'For my blog sidebar' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ partner_id: 1, program_id: 1, program_name: 'Acme', short_link: 'pat-blog', note: 'For my blog sidebar', status: 'pending', link_id: null });
    expect((await s.get('/api/portal/partners/1/link-requests', pat)).body.data.map((r: { id: number }) => r.id)).toContain(res.body.data.id);
    const listed = await s.get('/api/dashboard/programs/1/link-requests?status=pending', owner);
    // Any other status is refused, not ignored.
    const bad = await s.get('/api/dashboard/programs/1/link-requests?status=all', owner);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('status must be one of: pending, approved, declined');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data[0]).toMatchObject({ id: res.body.data.id, partner_code: 'pat', partner_name: 'Pat' });
  });

  it('bad requests are refused and store nothing: a program the record is not enrolled in, a bad or taken code, a long note', async () => {
    const before = await count('link_requests', {});
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ program_id: 4 }, 400, 'program_id must be a program this partner record is enrolled in'],
      [{}, 400, 'program_id must be a program this partner record is enrolled in'],
      [{ program_id: 1, short_link: 'has space' }, 400, 'short_link must be 1 to 100 characters of letters, digits, - or _'],
      [{ program_id: 1, short_link: 'sam10' }, 409, 'short_link is already taken'],
      [{ program_id: 1, note: 'x'.repeat(501) }, 400, 'note must be a string of at most 500 characters'],
    ];
    for (const [body, status, message] of cases) {
      const res = await ask(body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.body.error.message).toBe(message);
    }
    expect(await count('link_requests', {})).toBe(before);
  });

  it('at most 3 requests wait at once per partner record', async () => {
    expect((await ask({ program_id: 1 })).status).toBe(201);
    expect((await ask({ program_id: 1 })).status).toBe(201);
    const fourth = await ask({ program_id: 1 });
    expect(fourth.status).toBe(409);
    expect(fourth.body.error.message).toBe('You have 3 link requests waiting for an answer; wait for the owner to answer them');
  });

  it('approval creates the link as an owner would (enrolled, active, link.created), the partner sees it and gets an e-mail', async () => {
    const id = Number((await s.db('link_requests').where({ short_link: 'pat-blog' }).first('id')).id);
    const res = await approve(id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.request).toMatchObject({ status: 'approved', link_id: res.body.data.link.id });
    expect(res.body.data.link).toMatchObject({ short_link: 'pat-blog', partner_id: 1, program_id: 1, active: true, url: 'https://acme.test/?aff=pat-blog' });
    const links = (await s.get('/api/portal/partners/1', pat)).body.data.links.map((l: { short_link: string }) => l.short_link);
    expect(links).toContain('pat-blog');
    expect((await click(s, 'pat-blog')).length).toBeGreaterThan(10); // the new link tracks at once
    await settleMail(s, 'pat@p.test');
    expect(smtp.messages.some((m) => m.to.includes('pat@p.test') && m.raw.includes('pat-blog'))).toBe(true);
    const wanted = (e: { action: string }) => e.action === 'link_request.decided';
    const entries = await auditEntries(s, owner, wanted);
    expect(entries.some(wanted)).toBe(true);
    expect(entries.some((e) => e.action === 'link.created' && e.summary.includes('pat-blog'))).toBe(true);
  });

  it('the owner may pick the code when approving; without any, one is made from the partner code', async () => {
    const [first, second] = (await s.db('link_requests').where({ status: 'pending', partner_id: 1 }).orderBy('id').pluck('id')).map(Number);
    const picked = await approve(first!, { short_link: 'pat-owner-pick' });
    expect(picked.status, picked.text).toBe(200);
    expect(picked.body.data.link.short_link).toBe('pat-owner-pick');
    expect((await approve(second!, { short_link: 'bad code' })).status).toBe(400);
    const made = await approve(second!);
    expect(made.status, made.text).toBe(200);
    expect(made.body.data.link.short_link).toMatch(/^pat-1/);
  });

  it('a taken code at approval answers 409 and changes nothing', async () => {
    const res = await ask({ program_id: 1 });
    const taken = await approve(res.body.data.id, { short_link: 'sam10' });
    expect(taken.status).toBe(409);
    expect((await s.db('link_requests').where({ id: res.body.data.id }).first('status')).status).toBe('pending');
  });

  it('declining with a reason: the partner sees it; a decided request answers 409', async () => {
    const id = Number((await s.db('link_requests').where({ status: 'pending', partner_id: 1 }).first('id')).id);
    const res = await decline(id, { reason: 'One link per channel, please.' });
    expect(res.status, res.text).toBe(200);
    const mine = (await s.get('/api/portal/partners/1/link-requests', pat)).body.data.find((r: { id: number }) => r.id === id);
    expect(mine).toMatchObject({ status: 'declined', decline_reason: 'One link per channel, please.' });
    expect((await approve(id)).status).toBe(409);
    expect((await decline(id)).body.error.message).toBe('This link request was already declined');
  });

  it('restricted members get 403, another workspace 404, no session 401', async () => {
    const req = await ask({ program_id: 1 });
    const id = req.body.data.id as number;
    const restricted = await signInAs(s, 'restricted@acme.test');
    expect((await approve(id, {}, restricted)).status).toBe(403);
    const outsider = await signInAs(s, 'outsider@else.test');
    expect((await s.get('/api/dashboard/programs/1/link-requests', outsider)).status).toBe(404);
    expect((await approve(id, {}, outsider)).status).toBe(404);
    expect((await decline(id, {}, outsider)).status).toBe(404);
    expect((await approve(id, {}, {})).status).toBe(401);
    expect((await approve(id, {}, pat)).status).toBe(401);
    expect((await s.db('link_requests').where({ id }).first('status')).status).toBe('pending');
  });
});

describe(`[${dbKind}] The daily chart per link`, () => {
  it("counts one link's clicks, leads and sales per UTC day over 30 days, test traffic excluded", async () => {
    const link = await s.db('referral_links').where({ short_link: 'pat20' }).first('id');
    const before = (await s.get(`/api/portal/partners/1/links/${link.id}/daily`, pat)).body.data;
    const clickId = await click(s, 'pat20');
    await serverLead(s, clickId, `daily-${dbKind}`);
    expect((await sale(s, { transaction_id: `daily-${dbKind}-${Date.now()}`, click_id: clickId, currency: 'USD', amount_cents: 1000 })).status).toBe(200);
    const res = await s.get(`/api/portal/partners/1/links/${link.id}/daily`, pat);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d.days).toHaveLength(30);
    expect(d.days[29]).toBe(new Date(s.clock.now()).toISOString().slice(0, 10));
    expect(d.clicks[29] - before.clicks[29]).toBe(1);
    expect(d.leads[29] - before.leads[29]).toBe(1);
    expect(d.sales[29] - before.sales[29]).toBe(1);
  });

  it("another partner's link answers 404", async () => {
    const sams = await s.db('referral_links').where({ short_link: 'sam10' }).first('id');
    expect((await s.get(`/api/portal/partners/1/links/${sams.id}/daily`, pat)).status).toBe(404);
  });
});

describe(`[${dbKind}] Payouts' CSV lines`, () => {
  it('each payout shows its row of the PayPal or Wise payout file, with the partner\'s current details', async () => {
    const put = await send(s, 'PUT', '/api/portal/partners/1/payout-details', { method: 'wise', account_holder: 'Pat Partner', email: 'pat-wise@p.test', iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' }, pat);
    expect(put.status, put.text).toBe(200);
    const ids = await s.db('commissions').where({ partner_id: 1, status: 'pending' }).pluck('id');
    expect((await s.post('/api/dashboard/programs/1/commissions/approve', { ids: ids.map(Number) }, owner)).status).toBe(200);
    const payout = await s.post('/api/dashboard/programs/1/payouts', { partner_id: 1, currency: 'USD', method: 'wise', reference: 'PO-CSV-1' }, owner);
    expect(payout.status, payout.text).toBe(201);
    const shown = (await s.get('/api/portal/partners/1', pat)).body.data.payouts.find((p: { reference: string }) => p.reference === 'PO-CSV-1');
    expect(shown.csv_line).toBe(`Pat Partner,pat-wise@p.test,PO-CSV-1,PRIVATE,target,${(payout.body.data.amount_cents / 100).toFixed(2)},USD,USD,DE89370400440532013000,COBADEFFXXX,,,,`);
  });
});

describe(`[${dbKind}] Isolation of the new portal routes`, () => {
  const routes = (linkId: number): Array<[string, string]> => [
    ['GET', '/api/portal/partners/1/link-requests'],
    ['POST', '/api/portal/partners/1/link-requests'],
    ['GET', `/api/portal/partners/1/links/${linkId}/daily`],
  ];
  let linkId: number;
  beforeAll(async () => {
    linkId = Number((await s.db('referral_links').where({ short_link: 'pat20' }).first('id')).id);
  });

  it("another partner's session: 404 on every route of a record that is not theirs, and nothing is stored", async () => {
    const before = await count('link_requests', {});
    for (const [method, path] of routes(linkId)) {
      const res = await send(s, method, path, method === 'POST' ? { program_id: 1 } : undefined, sam);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect(await count('link_requests', {})).toBe(before);
  });

  it("an advertiser's dashboard session: 401 on every route", async () => {
    for (const [method, path] of routes(linkId)) expect((await send(s, method, path, method === 'POST' ? { program_id: 1 } : undefined, owner)).status, `${method} ${path}`).toBe(401);
  });

  it('no session: 401 on every route', async () => {
    for (const [method, path] of routes(linkId)) expect((await send(s, method, path, method === 'POST' ? { program_id: 1 } : undefined)).status, `${method} ${path}`).toBe(401);
  });

  it("answers never carry customers' keys or e-mail addresses", async () => {
    const text = (await s.get(`/api/portal/partners/1/links/${linkId}/daily`, pat)).text + (await s.get('/api/portal/partners/1/link-requests', pat)).text;
    expect(text).not.toMatch(/daily-(sqlite|postgres)|customer_key|click_id|"email"/);
  });
});
