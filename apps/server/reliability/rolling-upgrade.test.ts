/**
 * Rolling upgrades (docs/operator.md, "Upgrades": expand, then contract). This release's `migrate`
 * runs first; the previous release's server — checked out from git and built
 * (helpers/previous-release.ts says which commit) — must then start on the new schema and serve
 * the click → lead → sale → refund flow and the dashboard's event listing, on SQLite and on
 * PostgreSQL; and on PostgreSQL a server of this release runs beside it on the same database, the
 * two sharing the work the way a balancer spreads it during the rollout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorCommand, postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';
import { preparePreviousRelease, type PreviousRelease } from './helpers/previous-release.js';

const MIGRATIONS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'migrations');
const current = fs.readdirSync(MIGRATIONS).filter((f) => /^\d{14}_.+\.js$/.test(f)).sort();
const { fixture, keys } = programsFixture(1);
const KEY = { authorization: `Bearer ${keys[0]}` };
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

let previous: PreviousRelease;

beforeAll(async () => {
  previous = await preparePreviousRelease();
  console.log(`previous release: ${previous.commit.slice(0, 12)} "${previous.subject}" (checked out, installed and built in ${previous.preparedInSeconds.toFixed(1)} s)`);
}, 600_000);
afterAll(async () => {
  await previous?.remove();
});

interface Session {
  cookie: string;
}

async function signIn(server: ServerProcess, env: Record<string, string>): Promise<Session> {
  const idToken = await operatorCommand(env, ['dev-token', '--email', 'owner@rel.test']);
  const res = await fetch(`${server.url}/api/dashboard/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id_token: idToken }) });
  expect(res.status, await res.clone().text()).toBe(200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0] };
}

async function listing(server: ServerProcess, session: Session): Promise<Array<{ event_type: string; click_id: string; processor_event_id?: string }>> {
  const res = await fetch(`${server.url}/api/tracking/events/1?pageSize=50`, { headers: { cookie: session.cookie } });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { data: Array<{ event_type: string; click_id: string; processor_event_id?: string }> }).data;
}

/** One customer's click → lead → sale → refund, each step on the server `on` names (so that two releases can share the flow). */
async function flow(on: (step: 'click' | 'lead' | 'sale' | 'refund') => ServerProcess, label: string) {
  const address = `198.51.100.${randomBytes(1)[0]}`;
  const click = await postJson(`${on('click').url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/pricing?aff=p1' }, { 'x-forwarded-for': address });
  expect(click.status, JSON.stringify(click.body)).toBe(200);
  const clickId = click.body.click_id as string;
  const customer = `upgrade-${label}-${randomBytes(3).toString('hex')}`;
  const lead = await postJson(`${on('lead').url}/api/v1/track/lead`, { click_id: clickId, customer_key: customer }, KEY);
  expect(lead.status, JSON.stringify(lead.body)).toBe(200);
  const transactionId = `txn-${customer}`;
  const sale = await postJson(`${on('sale').url}/api/v1/track/sale`, { transaction_id: transactionId, amount_cents: 4_900, currency: 'USD', customer_key: customer }, KEY);
  expect(sale.status, JSON.stringify(sale.body)).toBe(200);
  const saleId = sale.body.data.sale_id as number;
  const refund = await postJson(`${on('refund').url}/api/v1/track/refund`, { transaction_id: transactionId, reason: 'refund' }, KEY);
  expect(refund.status, JSON.stringify(refund.body)).toBe(200);
  expect(refund.body.data.sale_id).toBe(saleId);
  return { clickId, customer, transactionId, saleId };
}

describe.each(['sqlite', 'postgres'] as const)('[%s] the previous release on the schema this release migrated', (kind) => {
  let db: Database;
  let env: Record<string, string>;
  let old: ServerProcess | undefined;
  let now: ServerProcess | undefined;

  beforeAll(async () => {
    db = await freshDatabase(kind);
    env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn', ENCRYPTION_KEY, SHUTDOWN_GRACE_MS: '0' };
  });
  afterAll(async () => {
    await old?.kill();
    await now?.kill();
    await db?.drop();
  });

  it("this release's migrate applies every migration, among them the ones the previous release does not have", async () => {
    const newer = current.filter((m) => !previous.migrations.includes(m));
    // Without a schema change between the two, the test would prove nothing.
    expect(newer.length, `the previous release ${previous.commit.slice(0, 12)} has every migration of this one`).toBeGreaterThan(0);
    const out = await operatorCommand(env, ['migrate']);
    expect(out).toContain(`applied ${current.length} migrations`);
    await seed(env, fixture);
  });

  it('the previous release reports the newer migrations as applied by a newer release, none pending (exit 0)', async () => {
    const out = await operatorCommand(env, ['migrate', 'status'], previous.main);
    for (const name of current.filter((m) => !previous.migrations.includes(m))) expect(out).toContain(`newer    ${name} (applied by a newer release)`);
    expect(out).not.toMatch(/^pending /m);
  });

  it('the previous release starts on it and serves click → lead → sale → refund, and the dashboard lists the events', async () => {
    old = await spawnServer(env, previous.main);
    const done = await flow(() => old!, `${kind}-old`);
    const events = await listing(old, await signIn(old, env));
    expect(events.filter((e) => e.click_id === done.clickId).map((e) => e.event_type).sort()).toEqual(['click', 'conversion', 'lead']);
    const [commission] = await query<{ status: string }>(db, `select c.status from commissions c where c.sale_id = ${done.saleId}`);
    expect(commission).toBeDefined();
    // The previous release neither applied nor undid anything.
    const recorded = (await query<{ name: string }>(db, 'select name from knex_migrations order by id')).map((r) => r.name);
    expect(recorded).toEqual(current);
  });

  it.runIf(kind === 'postgres')('beside a server of this release on the same database: the flow split between the two, a sale of one is a 409 on the other, both list the same events', async () => {
    now = await spawnServer(env);
    const steps = { click: now, lead: old!, sale: now, refund: old! };
    const done = await flow((step) => steps[step], 'mixed');
    const again = await postJson(`${old!.url}/api/v1/track/sale`, { transaction_id: done.transactionId, amount_cents: 4_900, currency: 'USD', customer_key: done.customer }, KEY);
    expect(again.status).toBe(409);
    expect(again.body.error.details.sale_id).toBe(done.saleId);
    // And the other way round: a flow the previous release starts, this release finishes.
    const reversed = await flow((step) => (step === 'click' || step === 'sale' ? old! : now!), 'reversed');
    for (const server of [old!, now]) {
      const events = await listing(server, await signIn(server, env));
      for (const d of [done, reversed]) expect(events.filter((e) => e.click_id === d.clickId).map((e) => e.event_type).sort()).toEqual(['click', 'conversion', 'lead']);
    }
    const refunds = await query<{ n: string }>(db, `select count(*) as n from refunds where sale_id in (${done.saleId}, ${reversed.saleId})`);
    expect(Number(refunds[0].n)).toBe(2);
  });
});
