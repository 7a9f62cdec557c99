/**
 * The partner portal (docs/partners.md): invitations, sign-in by a one-time e-mail link over a real
 * SMTP server, the portal API, and isolation between partners, advertisers and strangers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';
import { startSmtp, type TestSmtp } from './helpers/smtp.js';
import { cookieOf, mailTo as mailToOf, settleMail as settleMailOf, tokenOf } from './helpers/portal.js';
import { click, sale, serverLead } from './helpers/flows.js';
import { sha256Hex } from '../src/auth/secret-hash.js';

let s: TestServer;
let smtp: TestSmtp;
let owner: Record<string, string>;

function fixture() {
  const f = accountsFixture();
  // A partner of the other workspace (Else, program 4), for isolation.
  f.partners![2]!.workspace = 1; // Noe: in Acme's workspace, not enrolled yet
  f.partners!.push({ id: 4, name: 'Eve', email: 'eve@p.test', code: 'eve', workspace: 2 });
  f.enrollments!.push({ partner: 4, program: 4 });
  f.links!.push({ short_link: 'eve4', partner: 4, program: 4, active: true });
  return f;
}

const settleMail = (to: string) => settleMailOf(s, to);
const mailTo = (to: string, path: string) => mailToOf(s, smtp, to, path);

async function invite(partnerId: number, email?: string, by = owner) {
  return s.post(`/api/dashboard/partners/${partnerId}/invitations`, email ? { email } : {}, by);
}

async function acceptInvitationOf(partnerId: number, email: string, by = owner): Promise<Record<string, string>> {
  const invited = await invite(partnerId, email, by);
  expect(invited.status, invited.text).toBe(201);
  const res = await s.post('/api/portal/invitations/accept', { token: tokenOf(await mailTo(email, '/portal/invitation')) });
  expect(res.status, res.text).toBe(200);
  return cookieOf(res);
}

beforeAll(async () => {
  smtp = await startSmtp();
  s = await startTestServer({ fixture: fixture(), env: { SMTP_URL: smtp.url, MAIL_FROM: 'Reftrack <portal@reftrack.test>' } });
  owner = await signInAs(s, 'owner@acme.test');
});
afterAll(async () => {
  await s?.close();
  await smtp?.close();
});

describe('Invitations', () => {
  it('an owner invites a partner by e-mail; the mail arrives over SMTP with a one-time link', async () => {
    const res = await invite(1, 'Pat@P.test');
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ partner_id: 1, email: 'pat@p.test' });
    const link = await mailTo('pat@p.test', '/portal/invitation');
    expect(link.startsWith(s.running.deps.config.publicBaseUrl)).toBe(true);
    const mail = smtp.messages.find((m) => m.to.includes('pat@p.test'))!;
    expect(mail.from).toBe('portal@reftrack.test');
  });

  it('the invitation token is stored only as its hash, and the mail body is cleared once sent', async () => {
    const link = await mailTo('pat@p.test', '/portal/invitation');
    const token = tokenOf(link);
    const rows = await s.db('portal_invitations').select('token_hash');
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(rows.map((r) => r.token_hash)).toContain(sha256Hex(token));
    const mails = await s.db('mail_messages').where({ to_address: 'pat@p.test' }).select('status', 'body_sealed');
    expect(mails.every((m) => m.status === 'sent' && m.body_sealed === null)).toBe(true);
  });

  it('accepting binds the person to the partner record and signs them in; the link works once', async () => {
    await invite(1, 'pat@p.test');
    const token = tokenOf(await mailTo('pat@p.test', '/portal/invitation'));
    const accepted = await s.post('/api/portal/invitations/accept', { token });
    expect(accepted.status, accepted.text).toBe(200);
    const me = await s.get('/api/portal/session', cookieOf(accepted));
    expect(me.body.data.email).toBe('pat@p.test');
    expect(me.body.data.partners.map((p: { partner_id: number }) => p.partner_id)).toEqual([1]);
    const again = await s.post('/api/portal/invitations/accept', { token });
    expect(again.status).toBe(400);
    expect(again.body.error.message).toMatch(/already used/);
  });

  it('a newer invitation replaces the earlier one', async () => {
    await invite(2, 'sam@p.test');
    const first = tokenOf(await mailTo('sam@p.test', '/portal/invitation'));
    await invite(2, 'sam@p.test');
    const second = tokenOf(await mailTo('sam@p.test', '/portal/invitation'));
    expect(first).not.toBe(second);
    expect((await s.post('/api/portal/invitations/accept', { token: first })).status).toBe(400);
    expect((await s.post('/api/portal/invitations/accept', { token: second })).status).toBe(200);
  });

  it('an expired invitation does not work', async () => {
    await invite(3, 'noe@p.test');
    const token = tokenOf(await mailTo('noe@p.test', '/portal/invitation'));
    s.clock.offsetMs = 8 * 86_400_000;
    try {
      expect((await s.post('/api/portal/invitations/accept', { token })).status).toBe(400);
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('only a member who may manage partners invites, and only partners of their own workspace', async () => {
    const restricted = await signInAs(s, 'restricted@acme.test');
    expect((await s.post('/api/dashboard/partners/1/invitations', {}, restricted)).status).toBe(403);
    const outsider = await signInAs(s, 'outsider@else.test');
    expect((await s.post('/api/dashboard/partners/1/invitations', {}, outsider)).status).toBe(404);
    expect((await s.post('/api/dashboard/partners/1/invitations', {})).status).toBe(401);
    expect((await invite(1, 'not-an-address')).status).toBe(400);
  });

  it('the invitation is in the audit log', async () => {
    await s.running.deps.outbox.drain();
    const log = await s.get('/api/dashboard/workspaces/1/audit-log', owner);
    expect(log.body.data.some((e: { action: string; summary: string }) => e.action === 'partner.invited' && e.summary.includes('pat@p.test'))).toBe(true);
  });
});

describe('Sign-in by e-mail link', () => {
  it('a partner asks for a link and signs in with it, once', async () => {
    const res = await s.post('/api/portal/sign-in', { email: 'pat@p.test' });
    expect(res.status, res.text).toBe(202);
    const token = tokenOf(await mailTo('pat@p.test', '/portal/verify'));
    const signedIn = await s.post('/api/portal/sign-in/verify', { token });
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^reftrack_portal=.+HttpOnly; SameSite=Lax/);
    expect((await s.get('/api/portal/session', cookieOf(signedIn))).status).toBe(200);
    expect((await s.post('/api/portal/sign-in/verify', { token })).status).toBe(400);
  });

  it('an unknown address gets the same answer and no mail', async () => {
    const before = smtp.messages.length;
    const known = await s.post('/api/portal/sign-in', { email: 'pat@p.test' });
    const unknown = await s.post('/api/portal/sign-in', { email: 'nobody@p.test' });
    expect(unknown.status).toBe(known.status);
    expect(unknown.body).toEqual(known.body);
    await settleMail('nobody@p.test');
    await settleMail('pat@p.test');
    expect(smtp.messages.slice(before).some((m) => m.to.includes('nobody@p.test'))).toBe(false);
  });

  it('a link expires after 15 minutes', async () => {
    await s.post('/api/portal/sign-in', { email: 'sam@p.test' });
    const token = tokenOf(await mailTo('sam@p.test', '/portal/verify'));
    s.clock.offsetMs = 16 * 60_000;
    try {
      expect((await s.post('/api/portal/sign-in/verify', { token })).status).toBe(400);
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('at most 5 links per address in 15 minutes, with the same answer after that', async () => {
    s.clock.offsetMs = 60 * 60_000; // a fresh window
    try {
      const answers = [];
      for (let i = 0; i < 7; i++) answers.push(await s.post('/api/portal/sign-in', { email: 'sam@p.test' }));
      expect(new Set(answers.map((a) => a.status))).toEqual(new Set([202]));
      const person = await s.db('portal_people').where({ email: 'sam@p.test' }).first('id');
      const windowStart = s.clock.now() - 15 * 60_000;
      const n = await s.db('portal_sign_in_tokens').where({ person_id: person.id }).where('created_at', '>', windowStart).count({ n: '*' }).first();
      expect(Number(n!.n)).toBe(5);
    } finally {
      s.clock.offsetMs = 0;
    }
  });

  it('at most 20 sign-in requests per client address in 15 minutes', async () => {
    const ip = { 'x-forwarded-for': '10.250.0.1' };
    const statuses = [];
    for (let i = 0; i < 21; i++) statuses.push((await s.post('/api/portal/sign-in', { email: `x${i}@p.test` }, ip)).status);
    expect(statuses.slice(0, 20).every((c) => c === 202)).toBe(true);
    expect(statuses[20]).toBe(429);
  });

  it('bad input is refused: not an e-mail address, a malformed token, a cross-site form', async () => {
    expect((await s.post('/api/portal/sign-in', { email: 'nope' })).status).toBe(400);
    expect((await s.post('/api/portal/sign-in/verify', { token: 'short' })).status).toBe(400);
    const form = await s.raw('/api/portal/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=pat@p.test' });
    expect(form.status).toBe(415);
  });

  it('signing out ends the portal session', async () => {
    const cookie = await acceptInvitationOf(1, 'pat@p.test');
    expect((await s.raw('/api/portal/session', { method: 'DELETE', headers: { ...cookie, 'content-type': 'application/json' } })).status).toBe(200);
    expect((await s.get('/api/portal/session', cookie)).status).toBe(401);
  });
});

describe('E-mail delivery', () => {
  it("the mail worker's runDue returns only once a message that a background pass claimed has been sent", async () => {
    smtp.delayMs = 400;
    try {
      expect((await invite(2, 'slow@p.test')).status).toBe(201);
      // The outbox's mail consumer makes the message ready and wakes the server's own worker.
      await s.running.deps.outbox.drain();
      s.running.deps.mail.poke();
      let status = '';
      for (let i = 0; i < 250 && status !== 'sending'; i++) {
        status = (await s.db('mail_messages').where({ to_address: 'slow@p.test' }).first('status'))?.status ?? '';
        if (status !== 'sending') await new Promise((r) => setTimeout(r, 20));
      }
      // Claimed by the background pass and held by the slow SMTP server: no longer due to runDue's own pass.
      expect(status).toBe('sending');
      await s.running.deps.mail.runDue();
      expect(smtp.messages.some((m) => m.to.includes('slow@p.test'))).toBe(true);
    } finally {
      smtp.delayMs = 0;
    }
  });

  it('a refused message is retried later and never fails the action', async () => {
    smtp.refuse = true;
    try {
      expect((await invite(2, 'sam@p.test')).status).toBe(201);
      await settleMail('sam@p.test');
      const row = await s.db('mail_messages').where({ to_address: 'sam@p.test' }).orderBy('id', 'desc').first();
      expect(row.status).toBe('ready');
      expect(Number(row.attempts)).toBe(1);
      expect(row.last_error).toMatch(/451/);
    } finally {
      smtp.refuse = false;
    }
    s.clock.offsetMs = 60_000;
    try {
      await settleMail('sam@p.test');
    } finally {
      s.clock.offsetMs = 0;
    }
    const row = await s.db('mail_messages').where({ to_address: 'sam@p.test' }).orderBy('id', 'desc').first();
    expect(row.status).toBe('sent');
  });
});

describe('The portal', () => {
  let pat: Record<string, string>;
  beforeAll(async () => {
    pat = await acceptInvitationOf(1, 'pat@p.test');
    const clickId = await click(s, 'pat20');
    await serverLead(s, clickId, 'cust-portal-1');
    const sold = await sale(s, { transaction_id: 'portal-t1', click_id: clickId, currency: 'USD', amount_cents: 5_000 });
    expect(sold.status, sold.text).toBeLessThan(300);
  });

  it('shows the terms, the links with clicks, leads and sales, and commissions by status and currency', async () => {
    const res = await s.get('/api/portal/partners/1', pat);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d.partner).toEqual({ id: 1, name: 'Pat', code: 'pat' });
    expect(d.terms.map((t: { program_id: number }) => t.program_id)).toEqual([1, 2, 3]);
    expect(d.terms[0]).toMatchObject({ commission_type: 'percent', commission_rate: 20, cookie_window_days: 60, hold_days: 30 });
    const link = d.links.find((l: { short_link: string }) => l.short_link === 'pat20');
    expect(link).toMatchObject({ url: 'https://acme.test/?aff=pat20', clicks: 1, leads: 1, sales: 1 });
    expect(d.links.map((l: { short_link: string }) => l.short_link)).not.toContain('sam10');
    expect(d.commissions).toEqual([{ status: 'pending', currency: 'USD', count: 1, amount_cents: 1_000 }]);
  });

  it("stats: the partner's own clicks, leads and sales in one of their programs, by link; never another partner's", async () => {
    await click(s, 'sam10');
    await s.running.deps.outbox.drain(); // leads and sales reach the rollups through the outbox
    const res = await s.get('/api/portal/partners/1/stats?program_id=1&group_by=link', pat);
    expect(res.status, res.text).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ program_id: 1, filters: { partner_id: 1, link_id: null, dimension: null } });
    expect(d.totals).toMatchObject({ clicks: 1, leads: 1, sales: 1, revenue: [{ currency: 'USD', amount_cents: 5_000 }] });
    expect(d.breakdown.rows.map((r: { label: string }) => r.label)).toEqual(['pat20']);
    // Asking for another partner changes nothing: the portal fixes the filter to this partner.
    expect((await s.get('/api/portal/partners/1/stats?program_id=1&partner_id=2', pat)).body.data.totals.clicks).toBe(1);
    const refused = await s.get('/api/portal/partners/1/stats?program_id=4', pat);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('program_id must name a program this partner is enrolled in');
    expect((await s.get('/api/portal/partners/1/stats?group_by=country', pat)).body.error.message).toBe('group_by must be link in the partner portal');
  });

  it('payout details are saved encrypted and shown as a summary', async () => {
    const put = await s.raw('/api/portal/partners/1/payout-details', { method: 'PUT', headers: { ...pat, 'content-type': 'application/json' }, body: JSON.stringify({ method: 'paypal', paypal_email: 'pat-pay@p.test' }) });
    expect(put.status, put.text).toBe(200);
    expect((await s.get('/api/portal/partners/1/payout-details', pat)).body.data).toMatchObject({ method: 'paypal' });
    const row = await s.db('partner_payout_details').where({ partner_id: 1 }).first('details_sealed');
    expect(row.details_sealed).not.toContain('pat-pay@p.test');
  });

  it('one person with several partner records switches between them', async () => {
    await acceptInvitationOf(4, 'pat@p.test', await signInAs(s, 'outsider@else.test'));
    const me = await s.get('/api/portal/session', pat);
    expect(me.body.data.partners.map((p: { partner_id: number; workspace_name: string }) => [p.partner_id, p.workspace_name])).toEqual([[1, 'Acme'], [4, 'Else']]);
    expect((await s.get('/api/portal/partners/4', pat)).body.data.links.map((l: { short_link: string }) => l.short_link)).toEqual(['eve4']);
  });
});

describe('Isolation', () => {
  const routes: Array<[string, string]> = [
    ['GET', '/api/portal/partners/1'],
    ['GET', '/api/portal/partners/1/payout-details'],
    ['PUT', '/api/portal/partners/1/payout-details'],
    ['GET', '/api/portal/partners/1/stats'],
  ];

  it('another partner gets 404 for every route of a partner record that is not theirs', async () => {
    const sam = await acceptInvitationOf(2, 'sam@p.test');
    for (const [method, path] of routes) {
      const res = await s.raw(path, { method, headers: { ...sam, 'content-type': 'application/json' }, ...(method === 'PUT' ? { body: JSON.stringify({ method: 'paypal', paypal_email: 'x@p.test' }) } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  it("an advertiser's dashboard session is not a portal session (401), and a portal session is not a dashboard session", async () => {
    for (const [method, path] of [...routes, ['GET', '/api/portal/session']]) {
      const res = await s.raw(path, { method, headers: { ...owner, 'content-type': 'application/json' }, ...(method === 'PUT' ? { body: '{}' } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
    const pat = await acceptInvitationOf(1, 'pat@p.test');
    expect((await s.get('/api/dashboard/programs', pat)).status).toBe(401);
    expect((await s.get('/api/dashboard/programs/1/partners', pat)).status).toBe(401);
  });

  it('no session: 401 on every route', async () => {
    for (const [method, path] of [...routes, ['GET', '/api/portal/session'], ['DELETE', '/api/portal/session']]) {
      const res = await s.raw(path, { method, headers: { 'content-type': 'application/json' }, ...(method === 'PUT' ? { body: '{}' } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
    }
  });

  it("answers never carry customers' e-mail addresses, customer keys, click ids or program keys", async () => {
    const pat = await acceptInvitationOf(1, 'pat@p.test');
    const text = (await s.get('/api/portal/partners/1', pat)).text + (await s.get('/api/portal/session', pat)).text;
    expect(text).not.toContain('cust-portal-1');
    expect(text).not.toMatch(/aff_[0-9A-Za-z]{20,}/);
    expect(text).not.toMatch(/click_id|customer_key|api_key|"email":"(?!pat@p\.test)/);
  });
});

describe('Development mailbox', () => {
  it('without SMTP_URL on a development server, mail goes to the log and to /dev/mailbox', async () => {
    const dev = await startTestServer({ fixture: fixture() });
    try {
      const by = await signInAs(dev, 'owner@acme.test');
      expect((await dev.post('/api/dashboard/partners/1/invitations', {}, by)).status).toBe(201);
      await dev.running.deps.outbox.drain();
      for (let i = 0; i < 100; i++) {
        await dev.running.deps.mail.runDue();
        if ((await dev.db('mail_messages').where({ status: 'sent' }).count({ n: '*' }).first())?.n == 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const page = await dev.get('/dev/mailbox');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      expect(page.text).toContain('pat@p.test');
      expect(page.text).toMatch(/\/portal\/invitation\?token=[A-Za-z0-9_-]+/);
    } finally {
      await dev.close();
    }
  });

  it('a server with SMTP_URL has no mailbox page', async () => {
    expect((await s.get('/dev/mailbox')).status).toBe(404);
  });
});

describe('Pruning', () => {
  it('expired portal sessions and sign-in links are deleted by the pruner', async () => {
    const { pruneExpired } = await import('../src/jobs/prune-expired.js');
    const far = s.clock.now() + 31 * 86_400_000;
    const report = await pruneExpired(s.db, far);
    expect(report.portal_sessions).toBeGreaterThan(0);
    expect(report.portal_sign_in_tokens).toBeGreaterThan(0);
    expect(report.mail_messages).toBeGreaterThan(0);
    expect(Number((await s.db('portal_sessions').count({ n: '*' }).first())!.n)).toBe(0);
  });
});
