/**
 * Applications (docs/partners.md, "Applications"): a program's setting, the public application page's
 * API, the owner's approval (one transaction: partner, enrollment, default link, invitation and its
 * e-mail over a real SMTP server) or decline, and who may do what.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { startSmtp, type TestSmtp } from './helpers/smtp.js';
import { auditEntries, cookieOf, mailTo, send, settleMail, tokenOf } from './helpers/portal.js';

let s: TestServer;
let smtp: TestSmtp;
let owner: Record<string, string>;
let slug: string;

const settings = (body: unknown, who = owner, program = 1) => send(s, 'PUT', `/api/dashboard/programs/${program}/portal-settings`, body, who);
const apply = (body: Record<string, unknown>, headers: Record<string, string> = {}, at = slug) => s.post(`/api/apply/${at}`, body, headers);
const form = (email: string, extra: Record<string, unknown> = {}) => ({ name: 'Alex Applicant', email, website: 'https://alex.example', promotion: 'A newsletter of 5,000 readers about tools for shops.', ...extra });
const applications = (query = '', who = owner) => s.get(`/api/dashboard/programs/1/applications${query}`, who);
const approve = (id: number, who = owner) => s.post(`/api/dashboard/applications/${id}/approve`, {}, who);
const decline = (id: number, body: Record<string, unknown> = {}, who = owner) => s.post(`/api/dashboard/applications/${id}/decline`, body, who);
const idOf = async (email: string): Promise<number> => Number((await s.db('partner_applications').where({ email }).orderBy('id', 'desc').first('id')).id);
const count = async (table: string, where: Record<string, unknown>) => Number((await s.db(table).where(where).count({ n: '*' }).first())!.n);

beforeAll(async () => {
  smtp = await startSmtp();
  s = await startTestServer({ fixture: accountsFixture(), env: { SMTP_URL: smtp.url } });
  owner = await signInAs(s, 'owner@acme.test');
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});

describe(`[${dbKind}] Program setting`, () => {
  it('a program is closed for applications and link requests until an owner opens it', async () => {
    const res = await s.get('/api/dashboard/programs/1/portal-settings', owner);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ program_id: 1, applications_open: false, link_requests_open: false, apply_url: null });
  });

  it('opening it makes an application page with a random 16-character slug, kept when closed and opened again', async () => {
    const opened = await settings({ applications_open: true, link_requests_open: false });
    expect(opened.status, opened.text).toBe(200);
    const url = String(opened.body.data.apply_url);
    expect(url).toMatch(new RegExp(`^${s.running.deps.config.publicBaseUrl}/apply/[A-Za-z0-9_-]{16}$`));
    slug = url.split('/').pop()!;
    expect((await settings({ applications_open: false, link_requests_open: false })).body.data.apply_url).toBe(url);
    expect((await settings({ applications_open: true, link_requests_open: false })).body.data.apply_url).toBe(url);
  });

  it('bad input is refused and changes nothing', async () => {
    const res = await settings({ applications_open: 'yes', link_requests_open: false });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('applications_open and link_requests_open must be booleans');
    expect((await s.get('/api/dashboard/programs/1/portal-settings', owner)).body.data.applications_open).toBe(true);
  });

  it('only members who may manage partners change it; another workspace gets 404; no session 401', async () => {
    expect((await settings({ applications_open: false, link_requests_open: false }, await signInAs(s, 'restricted@acme.test'))).status).toBe(403);
    expect((await settings({ applications_open: false, link_requests_open: false }, await signInAs(s, 'outsider@else.test'))).status).toBe(404);
    expect((await settings({ applications_open: false, link_requests_open: false }, {})).status).toBe(401);
  });

  it('a change is in the audit log', async () => {
    const wanted = (e: { action: string }) => e.action === 'portal_settings.updated';
    expect((await auditEntries(s, owner, wanted)).some(wanted)).toBe(true);
  });
});

describe(`[${dbKind}] The public application page`, () => {
  it("lists the program's terms: commission, cookie window, hold period", async () => {
    const res = await s.get(`/api/apply/${slug}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ program_name: 'Acme', commission_type: 'percent', commission_rate: 20, cookie_window_days: 60, hold_days: 30 });
  });

  it('takes an application: 202, stored as pending', async () => {
    const res = await apply(form('alex@apply.test'));
    expect(res.status, res.text).toBe(202);
    expect(res.body.data.received).toBe(true);
    const row = await s.db('partner_applications').where({ email: 'alex@apply.test' }).first();
    expect(row).toMatchObject({ program_id: 1, name: 'Alex Applicant', website: 'https://alex.example', status: 'pending' });
  });

  it('each bad field answers 400 with its message, and nothing is stored', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [form('bad1@apply.test', { name: '' }), 'name must be 1 to 200 characters'],
      [form('bad2@apply.test', { name: 'x'.repeat(201) }), 'name must be 1 to 200 characters'],
      [form('not-an-address'), 'email must be an e-mail address'],
      [form('bad3@apply.test', { website: 'javascript:alert(1)' }), 'website must be an http:// or https:// address of at most 2048 characters, or empty'],
      [form('bad4@apply.test', { promotion: '' }), 'promotion must say how you will promote the program (1 to 2000 characters)'],
      [form('bad5@apply.test', { promotion: 'x'.repeat(2001) }), 'promotion must say how you will promote the program (1 to 2000 characters)'],
    ];
    for (const [body, message] of cases) {
      const res = await apply(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.message).toBe(message);
    }
    expect(await count('partner_applications', {})).toBe(1);
  });

  it('the website is optional', async () => {
    expect((await apply(form('nosite@apply.test', { website: '' }))).status).toBe(202);
    expect((await s.db('partner_applications').where({ email: 'nosite@apply.test' }).first('website')).website).toBeNull();
  });

  it('a second pending application of the same address is dropped by a database constraint, with the same answer', async () => {
    const first = await apply(form('twice@apply.test'));
    const second = await apply(form('Twice@Apply.test', { name: 'Someone else' }));
    expect(second.status).toBe(first.status);
    expect(second.body).toEqual(first.body);
    expect(await count('partner_applications', { email: 'twice@apply.test' })).toBe(1);
    await expect(s.db('partner_applications').insert({ program_id: 1, name: 'x', email: 'twice@apply.test', promotion: 'x', status: 'pending', created_at: Date.now() })).rejects.toThrow(/unique|UNIQUE/);
  });

  it("never tells whether an address is already a partner: a partner's address gets the same answer", async () => {
    const partner = await apply(form('pat@p.test'));
    const stranger = await apply(form('stranger@apply.test'));
    expect(partner.status).toBe(stranger.status);
    expect(partner.body).toEqual(stranger.body);
    expect(partner.text).not.toContain('pat@p.test');
  });

  it('a closed program and an unknown page answer the same 404, and take nothing', async () => {
    await settings({ applications_open: false, link_requests_open: false });
    try {
      const closedGet = await s.get(`/api/apply/${slug}`);
      const closedPost = await apply(form('late@apply.test'));
      const unknown = await s.get('/api/apply/AAAAAAAAAAAAAAAA');
      for (const res of [closedGet, closedPost, unknown]) {
        expect(res.status).toBe(404);
        expect(res.body.error.message).toBe('This program is not open for applications');
      }
      expect(await count('partner_applications', { email: 'late@apply.test' })).toBe(0);
    } finally {
      await settings({ applications_open: true, link_requests_open: false });
    }
  });

  it('at most 10 applications per client address an hour, then 429', async () => {
    const ip = { 'x-forwarded-for': '10.251.0.1' };
    const statuses = [];
    for (let i = 0; i < 11; i++) statuses.push((await apply(form(`burst${i}@apply.test`), ip)).status);
    expect(statuses.slice(0, 10).every((c) => c === 202)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('takes same-origin JSON only: a cross-site form is refused', async () => {
    const res = await s.raw(`/api/apply/${slug}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x&email=x%40apply.test&promotion=x' });
    expect(res.status).toBe(415);
    const cross = await s.post(`/api/apply/${slug}`, form('cross@apply.test'), { origin: 'https://evil.test' });
    expect(cross.status).toBe(403);
  });
});

describe(`[${dbKind}] Owner decisions`, () => {
  it('the owner lists applications, pending first by filter; an existing partner of the workspace is pointed out', async () => {
    const res = await applications('?status=pending');
    expect(res.status, res.text).toBe(200);
    const emails = res.body.data.map((a: { email: string }) => a.email);
    expect(emails).toContain('alex@apply.test');
    expect(res.body.data.every((a: { status: string }) => a.status === 'pending')).toBe(true);
    expect(res.body.data.find((a: { email: string }) => a.email === 'pat@p.test').existing_partner_id).toBe(1);
    expect(res.body.data.find((a: { email: string }) => a.email === 'alex@apply.test').existing_partner_id).toBeNull();
  });

  it('an unknown status filter is refused with 400, not ignored', async () => {
    for (const query of ['?status=open', '?status=', '?status=pending&status=declined']) {
      const res = await applications(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.message).toBe('status must be one of: pending, approved, declined');
    }
  });

  it('approval creates, in one transaction, the partner, its enrollment, a default link, the invitation and its e-mail', async () => {
    const id = await idOf('alex@apply.test');
    const res = await approve(id);
    expect(res.status, res.text).toBe(200);
    const { partner_id: partnerId, link } = res.body.data;
    expect(res.body.data.application).toMatchObject({ id, status: 'approved', partner_id: partnerId });
    expect(await s.db('partners').where({ id: partnerId }).first('name', 'email', 'code', 'workspace_id')).toMatchObject({ name: 'Alex Applicant', email: 'alex@apply.test', code: 'alex-applicant', workspace_id: 1 });
    expect(await count('partner_programs', { partner_id: partnerId, program_id: 1 })).toBe(1);
    expect(link).toMatchObject({ short_link: 'alex-applicant', partner_id: partnerId, program_id: 1, active: true, url: 'https://acme.test/?aff=alex-applicant' });
    expect(await count('portal_invitations', { partner_id: partnerId })).toBe(1);
    const events = await s.db('outbox_events').where('occurred_at', '>=', Date.now() - 60_000).pluck('type');
    for (const type of ['partner.enrolled', 'link.created', 'partner.invited', 'partner_application.decided', 'mail.queued']) expect(events, type).toContain(type);
  });

  it('the invitation arrives over SMTP; the applicant accepts it, signs in and sees the default link', async () => {
    const token = tokenOf(await mailTo(s, smtp, 'alex@apply.test', '/portal/invitation'));
    const accepted = await s.post('/api/portal/invitations/accept', { token });
    expect(accepted.status, accepted.text).toBe(200);
    const partnerId = Number((await s.db('partners').where({ email: 'alex@apply.test' }).first('id')).id);
    const overview = await s.get(`/api/portal/partners/${partnerId}`, cookieOf(accepted));
    expect(overview.status, overview.text).toBe(200);
    expect(overview.body.data.links.map((l: { short_link: string }) => l.short_link)).toEqual(['alex-applicant']);
  });

  it('the decision is in the audit log', async () => {
    const wanted = (e: { action: string; summary: string }) => e.action === 'partner_application.decided' && e.summary.includes('approved the application of alex@apply.test');
    expect((await auditEntries(s, owner, wanted)).some(wanted)).toBe(true);
  });

  it('an application is decided once: approving or declining it again answers 409', async () => {
    const id = await idOf('alex@apply.test');
    const again = await approve(id);
    expect(again.status).toBe(409);
    expect(again.body.error.message).toBe('This application was already approved');
    expect((await decline(id)).status).toBe(409);
  });

  it("two approvals at once: one wins, the other changes nothing", async () => {
    await apply(form('race@apply.test', { name: 'Race Applicant' }));
    const id = await idOf('race@apply.test');
    const answers = await Promise.all([approve(id), approve(id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(await count('partners', { email: 'race@apply.test' })).toBe(1);
    expect(await count('portal_invitations', { email: 'race@apply.test' })).toBe(1);
  });

  it("approving an address that is already the workspace's partner enrolls that partner instead of making another", async () => {
    const id = await idOf('pat@p.test');
    const res = await approve(id);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.partner_id).toBe(1);
    expect(await count('partners', { email: 'pat@p.test' })).toBe(1);
    expect(res.body.data.link).toMatchObject({ short_link: 'pat', partner_id: 1 }); // the partner's code, free as a short_link
  });

  it('declining with a reason and notify e-mails the applicant; without notify no mail is sent', async () => {
    const quiet = await idOf('stranger@apply.test');
    expect((await decline(quiet)).status).toBe(200);
    await settleMail(s, 'stranger@apply.test');
    expect(smtp.messages.some((m) => m.to.includes('stranger@apply.test'))).toBe(false);
    const told = await idOf('twice@apply.test');
    const res = await decline(told, { reason: 'We only work with sites about gardening.', notify: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.application).toMatchObject({ status: 'declined', decline_reason: 'We only work with sites about gardening.' });
    await settleMail(s, 'twice@apply.test');
    const mail = smtp.messages.find((m) => m.to.includes('twice@apply.test'));
    expect(mail?.raw.replace(/=\r?\n/g, '')).toContain('gardening');
  });

  it('a declined address may apply again (only pending applications are unique)', async () => {
    expect((await apply(form('twice@apply.test'))).status).toBe(202);
    expect(await count('partner_applications', { email: 'twice@apply.test', status: 'pending' })).toBe(1);
  });

  it('a bad decline body is refused and changes nothing', async () => {
    const id = await idOf('twice@apply.test');
    expect((await decline(id, { reason: 'x'.repeat(501) })).status).toBe(400);
    expect((await decline(id, { notify: 'yes' })).status).toBe(400);
    expect((await s.db('partner_applications').where({ id }).first('status')).status).toBe('pending');
  });

  it('restricted members get 403, another workspace 404, no session 401, a partner portal session 401', async () => {
    const id = await idOf('twice@apply.test');
    const restricted = await signInAs(s, 'restricted@acme.test');
    expect((await approve(id, restricted)).status).toBe(403);
    expect((await decline(id, {}, restricted)).status).toBe(403);
    const outsider = await signInAs(s, 'outsider@else.test');
    expect((await applications('', outsider)).status).toBe(404);
    expect((await approve(id, outsider)).status).toBe(404);
    expect((await decline(id, {}, outsider)).status).toBe(404);
    expect((await approve(id, {})).status).toBe(401);
    expect((await applications('', {})).status).toBe(401);
    const portal = await s.post('/api/portal/sign-in', { email: 'alex@apply.test' });
    expect(portal.status).toBe(202);
    const signedIn = await s.post('/api/portal/sign-in/verify', { token: tokenOf(await mailTo(s, smtp, 'alex@apply.test', '/portal/verify')) });
    expect((await applications('', cookieOf(signedIn))).status).toBe(401);
    expect((await approve(id, cookieOf(signedIn))).status).toBe(401);
    expect((await s.db('partner_applications').where({ id }).first('status')).status).toBe('pending');
  });

  it("the public routes answer the same with an advertiser's session, a partner's session or none, and never more", async () => {
    const signedIn = await s.post('/api/portal/sign-in/verify', { token: tokenOf((await s.post('/api/portal/sign-in', { email: 'alex@apply.test' }), await mailTo(s, smtp, 'alex@apply.test', '/portal/verify'))) });
    const partner = cookieOf(signedIn);
    const answers = await Promise.all([{}, owner, partner].map((who) => s.get(`/api/apply/${slug}`, who)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(answers[2]!.body).toEqual(answers[0]!.body);
    const posts = await Promise.all([{}, owner, partner].map((who, i) => apply(form(`probe${i}@apply.test`), who)));
    expect(posts.map((p) => p.status)).toEqual([202, 202, 202]);
    expect(posts[1]!.body).toEqual(posts[0]!.body);
    expect(posts[2]!.body).toEqual(posts[0]!.body);
  });

  it('the public page never shows applicants or e-mail addresses', async () => {
    const res = await s.get(`/api/apply/${slug}`);
    expect(res.text).not.toMatch(/@/);
  });
});
