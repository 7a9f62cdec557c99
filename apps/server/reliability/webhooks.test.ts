/**
 * Outbound webhooks across real server processes (docs/webhooks.md, "Delivery and retries"):
 *
 * - a server killed (SIGKILL) while its attempts are in flight loses no delivery: after a restart
 *   every event reaches the receiver, each at most twice, always with the same webhook-id;
 * - two servers on one PostgreSQL database never run two attempts of one delivery at once, and
 *   deliver each event exactly once when the receiver answers. (Several processes are a PostgreSQL
 *   deployment, docs/deploy.md. A SQLite version of this test, two processes on one file, saw a
 *   tracking call answer 500 in one of two runs — two writing processes are not a supported
 *   SQLite set-up. On SQLite, two workers claiming at once are tested in test/webhooks.test.ts.)
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { postJson, seed, spawnServer, type ServerProcess } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';
import { postgresUrl } from '../test/helpers/databases.js';
import { startReceiver, type Receiver } from '../test/helpers/webhook-receiver.js';

const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');
const run = promisify(execFile);
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

interface Setup {
  db: Database;
  env: Record<string, string>;
  keys: string[];
  agentKey: string;
  receiver: Receiver;
}

async function setup(kind: 'sqlite' | 'postgres', timeoutMs: number): Promise<Setup> {
  const db = await freshDatabase(kind);
  cleanups.push(() => db.drop());
  const { fixture, keys } = programsFixture(3);
  // The receivers listen on 127.0.0.1: private targets are allowed for these servers.
  const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOKS_TIMEOUT_MS: String(timeoutMs) };
  await seed(env, fixture);
  const { stdout } = await run(process.execPath, [MAIN, 'agent-keys', 'create', '--workspace', '1', '--scopes', 'webhooks:manage'], { env: { ...process.env, ...env } });
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  return { db, env, keys, agentKey: stdout.trim(), receiver };
}

async function createEndpoint(server: ServerProcess, s: Setup): Promise<string> {
  const res = await postJson(`${server.url}/api/agent/v1/webhooks`, { url: s.receiver.url, event_types: ['sale.created'] }, { authorization: `Bearer ${s.agentKey}` });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.secret as string;
}

let ipCounter = 1;
/** A click, a lead and a sale on program `p` (0-based); answers the sale's transaction id. */
async function chain(server: ServerProcess, s: Setup, p: number, name: string): Promise<string> {
  const ip = { 'x-forwarded-for': `198.51.100.${ipCounter++ % 250}` };
  const click = await postJson(`${server.url}/api/v1/track/click`, { affiliate_url: `https://rel.test/?aff=p${p + 1}` }, ip);
  expect(click.status).toBe(200);
  const lead = await postJson(`${server.url}/api/v1/track/lead`, { click_id: click.body.click_id, customer_key: name }, { authorization: `Bearer ${s.keys[p]}`, ...ip });
  expect(lead.status).toBe(200);
  const txn = `tx-${name}`;
  const sale = await postJson(`${server.url}/api/v1/track/sale`, { transaction_id: txn, amount_cents: 1000, customer_key: name }, { authorization: `Bearer ${s.keys[p]}` });
  expect(sale.status, JSON.stringify(sale.body)).toBe(200);
  return txn;
}

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function crashMidDelivery(kind: 'sqlite' | 'postgres'): Promise<void> {
  // Attempts get 5 s, so a lease lasts 10 s: the server is killed well inside the attempts.
  const s = await setup(kind, 5000);
  let server = await spawnServer(s.env);
  cleanups.push(() => server.kill());
  const secret = await createEndpoint(server, s);
  s.receiver.hold = true;
  const sales: string[] = [];
  for (let i = 0; i < 6; i++) sales.push(await chain(server, s, i % 3, `crash-${kind}-${i}`));
  // Every delivery is in flight (the receiver holds them): kill the server now.
  await until(() => s.receiver.received.length >= 6, 10_000, 'six deliveries in flight');
  await server.kill('SIGKILL');
  s.receiver.dropHeld();
  s.receiver.hold = false;
  const firstIds = new Set(s.receiver.received.map((d) => d.headers['webhook-id']));
  expect(firstIds.size).toBe(6);
  server = await spawnServer(s.env);
  // The dead process's leases expire; the new one retries each delivery with the same id.
  await until(async () => (await query<{ n: number | string }>(s.db, `select count(*) as n from webhook_deliveries where status = 'succeeded'`))[0].n == 6, 30_000, 'six deliveries succeeded');
  const byId = new Map<string, number>();
  for (const d of s.receiver.received) {
    byId.set(d.headers['webhook-id'], (byId.get(d.headers['webhook-id']) ?? 0) + 1);
    new Webhook(secret).verify(d.body, d.headers);
    new SvixWebhook(secret).verify(d.body, d.headers);
  }
  expect(new Set(byId.keys())).toEqual(firstIds);
  for (const [, n] of byId) expect(n).toBeLessThanOrEqual(2);
  const delivered = s.receiver.received.map((d) => JSON.parse(d.body).data.sale.transaction_id as string);
  for (const txn of sales) expect(delivered).toContain(txn);
}

async function twoProcesses(kind: 'sqlite' | 'postgres'): Promise<void> {
  const s = await setup(kind, 5000);
  const servers = [await spawnServer(s.env), await spawnServer(s.env)];
  cleanups.push(async () => void (await Promise.all(servers.map((p) => p.kill()))));
  await createEndpoint(servers[0], s);
  // A slow receiver keeps each attempt open long enough for the other process to try to take it.
  s.receiver.delayMs = 300;
  const perId = new Map<string, number>();
  let overlapping = 0;
  const open = new Set<string>();
  const answer = s.receiver.answer;
  s.receiver.answer = (d) => {
    open.delete(d.headers['webhook-id']);
    return typeof answer === 'number' ? answer : 204;
  };
  const origPush = s.receiver.received.push.bind(s.receiver.received);
  s.receiver.received.push = (...items) => {
    for (const d of items) {
      const id = d.headers['webhook-id'];
      if (open.has(id)) overlapping++;
      open.add(id);
      perId.set(id, (perId.get(id) ?? 0) + 1);
    }
    return origPush(...items);
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => chain(servers[i % 2], s, i % 3, `two-${kind}-${i}`)));
  await until(() => perId.size >= 20, 30_000, 'twenty deliveries');
  await until(async () => (await query<{ n: number | string }>(s.db, `select count(*) as n from webhook_deliveries where status = 'succeeded'`))[0].n == 20, 15_000, 'twenty succeeded');
  expect(overlapping).toBe(0);
  for (const [, n] of perId) expect(n).toBe(1);
  const attempts = await query<{ n: number | string }>(s.db, 'select count(*) as n from webhook_attempts');
  expect(Number(attempts[0].n)).toBe(20);
}

describe('webhook deliveries survive a crash of the server mid-delivery', () => {
  it('SQLite: every event arrives after the restart, at most twice, with its webhook-id', async () => {
    await crashMidDelivery('sqlite');
  });
  it('PostgreSQL: every event arrives after the restart, at most twice, with its webhook-id', async () => {
    if (!(await postgresUrl())) return;
    await crashMidDelivery('postgres');
  });
});

describe('two server processes deliver each event once, one attempt at a time', () => {
  it('PostgreSQL: two processes on one database', async () => {
    if (!(await postgresUrl())) return;
    await twoProcesses('postgres');
  });
});
