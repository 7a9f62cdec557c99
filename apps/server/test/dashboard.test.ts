import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, signInAs } from './helpers/accounts.js';

let s: TestServer;
let owner: Record<string, string>;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
  owner = await signInAs(s, 'owner@acme.test');
});
afterAll(() => s?.close());

const send = (method: string, path: string, body?: unknown, who = owner) =>
  s.raw(path, { method, headers: { 'content-type': 'application/json', ...who }, body: body === undefined ? undefined : JSON.stringify(body) });

describe(`[${dbKind}] dashboard programs`, () => {
  it('creates a program with the CLI’s validation; the key is created but not revealed', async () => {
    const res = await send('POST', '/api/dashboard/programs', { name: 'Shop', domain: 'https://Shop.Example.com/path', commission_type: 'recurring_percent', commission_rate: 15 });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: 'Shop', domain: 'shop.example.com', commission_type: 'recurring_percent', commission_rate: 15, attribution_window_days: 60, lead_auth: 'server_required', advertiser_id: 1, api_token_masked: expect.stringMatching(/^•+[0-9A-Za-z]{4}$/) });
    expect(JSON.stringify(res.body)).not.toMatch(/aff_[0-9A-Za-z]{20,}/);
    expect(await s.db('program_keys').where({ program_id: res.body.data.id })).toHaveLength(1);
  });

  const invalid: Array<[Record<string, unknown>, string]> = [
    [{ name: 'x', domain: 'x.test', commission_type: 'percent' }, 'Missing required fields: name, domain, commission_type, commission_rate'],
    [{ name: 'x', domain: 'x.test', commission_type: 'bounty', commission_rate: 5 }, 'Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed'],
    [{ name: 'x', domain: 'x.test', commission_type: 'fixed', commission_rate: -5 }, 'commission_rate must be a positive number'],
    [{ name: 'x', domain: 'not a domain', commission_type: 'fixed', commission_rate: 5 }, 'domain must be a host name such as example.com'],
    [{ name: 'x', domain: 'x.test', commission_type: 'fixed', commission_rate: 5, attribution_window_days: 0 }, 'attribution_window_days must be an integer from 1 to 365'],
    [{ name: 'x', domain: 'x.test', commission_type: 'fixed', commission_rate: 5, lead_auth: 'anyone' }, 'lead_auth must be server_required or browser_allowed'],
  ];
  for (const [body, message] of invalid) {
    it(`400 ${message}`, async () => {
      const res = await send('POST', '/api/dashboard/programs', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(message);
    });
  }

  it('updates settings; a new attribution window reaches the click answer at once', async () => {
    const res = await send('PATCH', '/api/dashboard/programs/1', { attribution_window_days: 30, lead_auth: 'browser_allowed', commission_rate: 25 });
    expect(res.body.data).toMatchObject({ attribution_window_days: 30, lead_auth: 'browser_allowed', commission_rate: 25 });
    const click = await s.post('/api/v1/track/click', { affiliate_url: 'https://acme.test/?aff=pat20' });
    expect(click.body.cookie_window_days).toBe(30);
    await send('PATCH', '/api/dashboard/programs/1', { attribution_window_days: 60, lead_auth: 'server_required', commission_rate: 20 });
    expect((await send('PATCH', '/api/dashboard/programs/1', {})).body.error.message).toBe('No updatable fields given');
  });
});

describe(`[${dbKind}] 5.4 generate and regenerate`, () => {
  it('the full key appears in that response alone; the old key stops at once; reads show it masked', async () => {
    const res = await send('POST', '/api/dashboard/programs/1/key');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const fresh = res.body.data.api_key as string;
    expect(fresh).toMatch(/^aff_[0-9A-Za-z]{32,}$/);
    expect((await s.get('/api/v1/programs/me/readiness', bearer(KEY1))).status).toBe(401);
    expect((await s.get('/api/v1/programs/me/readiness', bearer(fresh))).status).toBe(200);
    const read = await send('GET', '/api/dashboard/programs/1');
    expect(read.body.data.api_token_masked.endsWith(fresh.slice(-4))).toBe(true);
    expect(JSON.stringify(read.body)).not.toContain(fresh);
  });

  it('clears a rotation mark', async () => {
    await s.db('program_keys').where({ program_id: 2 }).update({ rotation_marked_at: Date.now(), rotation_deadline: Date.now() + 86_400_000 });
    expect((await send('GET', '/api/dashboard/programs/2')).body.data.key_rotation).not.toBeNull();
    await send('POST', '/api/dashboard/programs/2/key');
    expect((await send('GET', '/api/dashboard/programs/2')).body.data.key_rotation).toBeNull();
  });
});

describe(`[${dbKind}] partners and referral links`, () => {
  it('creates a partner and a link, lists the link with clicks and last click, switches it off and on (3.3)', async () => {
    const partner = await send('POST', '/api/dashboard/programs/1/partners', { name: 'Lea Link', email: 'lea@p.test', code: `lea-${dbKind}` });
    expect(partner.status).toBe(201);
    const link = await send('POST', '/api/dashboard/programs/1/links', { short_link: `lea-${dbKind}`, partner_id: partner.body.data.id });
    expect(link.status).toBe(201);
    expect(link.body.data).toMatchObject({ short_link: `lea-${dbKind}`, active: true, clicks: 0, last_clicked: null, url: `https://acme.test/?aff=lea-${dbKind}` });
    await s.post('/api/v1/track/click', { affiliate_url: `https://acme.test/?aff=lea-${dbKind}` });
    const listed = (await send('GET', '/api/dashboard/programs/1/links')).body.data.find((l: { id: number }) => l.id === link.body.data.id);
    expect(listed.clicks).toBe(1);
    expect(Date.parse(listed.last_clicked)).toBeGreaterThan(Date.now() - 60_000);
    const off = await send('PATCH', `/api/dashboard/links/${link.body.data.id}`, { active: false });
    expect(off.body.data.active).toBe(false);
    const refused = await s.post('/api/v1/track/click', { affiliate_url: `https://acme.test/?aff=lea-${dbKind}` });
    expect(refused.status).toBe(410);
    await send('PATCH', `/api/dashboard/links/${link.body.data.id}`, { active: true });
    expect((await s.post('/api/v1/track/click', { affiliate_url: `https://acme.test/?aff=lea-${dbKind}` })).status).toBe(200);
    const partners = (await send('GET', '/api/dashboard/programs/1/partners')).body.data;
    expect(partners.find((p: { code: string }) => p.code === `lea-${dbKind}`)).toMatchObject({ clicks: 2, leads: 0, sales: 0 });
  });

  it('refuses a taken code or short link and a partner of another workspace', async () => {
    expect((await send('POST', '/api/dashboard/programs/1/partners', { name: 'Dup', code: 'pat' })).status).toBe(409);
    expect((await send('POST', '/api/dashboard/programs/1/links', { short_link: 'pat20', partner_id: 1 })).body.error.message).toBe('short_link is already taken');
    expect((await send('POST', '/api/dashboard/programs/1/links', { short_link: 'bad link!', partner_id: 1 })).body.error.message).toBe('short_link must be 1 to 100 characters of letters, digits, - or _');
    const outsider = await signInAs(s, 'outsider@else.test');
    const foreign = await send('POST', '/api/dashboard/programs/4/partners', { name: 'F', code: `foreign-${dbKind}` }, outsider);
    const res = await send('POST', '/api/dashboard/programs/1/links', { short_link: `x-${dbKind}`, partner_id: foreign.body.data.id });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toBe('Partner not found');
  });
});

describe(`[${dbKind}] processor connection`, () => {
  it('stores the account id and signing secret; the secret is never read back', async () => {
    const res = await send('PUT', '/api/dashboard/programs/1/payments', { stripe_account_id: 'acct_1Abc', webhook_secret: 'whsec_supersecret' });
    const base = s.running.deps.config.publicBaseUrl;
    expect(res.body.data).toEqual({
      provider: 'stripe',
      connected: true,
      stripe_account_id: 'acct_1Abc',
      webhook_secret_set: true,
      webhook_url: `${base}/api/v1/webhooks/stripe`,
      intake_url: expect.stringMatching(new RegExp(`^${base}/api/v1/webhooks/stripe/whe_[0-9A-Za-z]{32}$`)),
    });
    const read = await send('GET', '/api/dashboard/programs/1/payments');
    expect(read.body.data).toEqual(res.body.data);
    expect(JSON.stringify(read.body)).not.toContain('supersecret');
    const readiness = await send('GET', '/api/dashboard/programs/1/readiness');
    expect(readiness.body.data.checklist.find((i: { key: string }) => i.key === 'processor_connected').done).toBe(true);
    expect((await send('PUT', '/api/dashboard/programs/1/payments', { stripe_account_id: 'nope', webhook_secret: 'whsec_x' })).body.error.message).toBe('stripe_account_id must start with acct_');
    const off = await send('DELETE', '/api/dashboard/programs/1/payments');
    expect(off.body.data).toMatchObject({ connected: false, stripe_account_id: null, webhook_secret_set: false, intake_url: null });
    const after = await send('GET', '/api/dashboard/programs/1/readiness');
    expect(after.body.data.checklist.find((i: { key: string }) => i.key === 'processor_connected').done).toBe(false);
  });

  it('the intake address is kept when the secret or account is replaced, and new after disconnect and connect', async () => {
    const first = (await send('PUT', '/api/dashboard/programs/2/payments', { stripe_account_id: 'acct_2Abc', webhook_secret: 'whsec_first' })).body.data.intake_url;
    const replaced = await send('PUT', '/api/dashboard/programs/2/payments', { stripe_account_id: 'acct_2Other', webhook_secret: 'whsec_rolled' });
    expect(replaced.body.data).toMatchObject({ stripe_account_id: 'acct_2Other', intake_url: first });
    await send('DELETE', '/api/dashboard/programs/2/payments');
    const again = (await send('PUT', '/api/dashboard/programs/2/payments', { stripe_account_id: 'acct_2Abc', webhook_secret: 'whsec_first' })).body.data.intake_url;
    expect(again).toMatch(/\/whe_[0-9A-Za-z]{32}$/);
    expect(again).not.toBe(first);
    expect((await s.db('processor_connections').where({ program_id: 2 })).length).toBe(1);
  });
});
