/**
 * No table grows from unauthenticated traffic (hardening issue, item 5): rows stored by calls that
 * prove nothing — CLI login sessions, used id_tokens — expire and are deleted, with expired
 * dashboard sessions and CLI tokens, by one job every server process runs at start and on an
 * interval (`reftrack-server prune` runs it once: operator.test.ts).
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '@reftrack/contract';
import { bearer, dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { accountsFixture, cliLoginAs, signInAs } from './helpers/accounts.js';
import { CLI_LOGIN_SESSION_GRACE_MS, OUTBOX_RETENTION_MS, pruneExpired, schedulePruning, WEBHOOK_DELIVERY_RETENTION_MS } from '../src/jobs/prune-expired.js';
import { appendEvents, type NewEvent } from '../src/db/outbox.js';
import { startServer } from '../src/server.js';
import { sha256Hex } from '../src/auth/secret-hash.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ fixture: accountsFixture() });
});
afterAll(() => s?.close());

const MIN = 60_000;
const DAY = 86_400_000;
const count = async (table: string) => Number((await s.db(table).count({ n: '*' }).first())!.n);
const prune = (offsetMs: number) => pruneExpired(s.db, s.clock.now() + offsetMs);

async function withClock<T>(offsetMs: number, work: () => Promise<T>): Promise<T> {
  s.clock.offsetMs = offsetMs;
  try {
    return await work();
  } finally {
    s.clock.offsetMs = 0;
  }
}

async function start(): Promise<string> {
  const res = await s.post('/api/v1/cli/auth/start', {});
  expect(res.status).toBe(200);
  return res.body.data.state;
}

/** Expired login sessions written directly, `expiredForMs` past their expiry. */
async function expiredLoginSessions(n: number, expiredForMs: number): Promise<void> {
  const expiresAt = Date.now() - expiredForMs;
  const rows = Array.from({ length: n }, () => ({ state_hash: sha256Hex(randomBytes(16).toString('hex')), status: 'pending', created_at: expiresAt - 5 * MIN, expires_at: expiresAt }));
  for (let i = 0; i < rows.length; i += 200) await s.db('cli_login_sessions').insert(rows.slice(i, i + 200));
}

async function waitFor(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe(`[${dbKind}] expired rows are deleted (pruneExpired)`, () => {
  it(`a CLI login session answers "expired" for ${CLI_LOGIN_SESSION_GRACE_MS / MIN} minutes after its 5, then is deleted (the poll then answers 404)`, async () => {
    const state = await start();
    const expiredPoll = await withClock(5 * MIN + 1, () => s.get(`/api/v1/cli/auth/poll?state=${state}`));
    expect(expiredPoll.body.data).toEqual({ status: 'expired' });
    await prune(5 * MIN + CLI_LOGIN_SESSION_GRACE_MS - MIN);
    expect((await withClock(5 * MIN + CLI_LOGIN_SESSION_GRACE_MS - MIN, () => s.get(`/api/v1/cli/auth/poll?state=${state}`))).body.data).toEqual({ status: 'expired' });
    const report = await prune(5 * MIN + CLI_LOGIN_SESSION_GRACE_MS + 1);
    expect(report.cli_login_sessions).toBeGreaterThanOrEqual(1);
    const gone = await s.get(`/api/v1/cli/auth/poll?state=${state}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe(ERRORS.cliPollNotFound.message);
  });

  it('login starts by the thousand leave nothing behind once expired, whatever became of them', async () => {
    const before = await count('cli_login_sessions');
    for (let i = 0; i < 20; i++) await start();
    await cliLoginAs(s, 'owner@acme.test'); // a consumed session
    await expiredLoginSessions(2_500, CLI_LOGIN_SESSION_GRACE_MS + MIN); // more than one batch
    expect(await count('cli_login_sessions')).toBe(before + 2_521);
    const report = await prune(5 * MIN + CLI_LOGIN_SESSION_GRACE_MS + 1);
    expect(report.cli_login_sessions).toBe(before + 2_521);
    expect(await count('cli_login_sessions')).toBe(0);
  });

  it('a used id_token is remembered until its exp, then deleted', async () => {
    await s.db('used_id_tokens').delete();
    await signInAs(s, 'member@acme.test'); // development tokens live 10 minutes
    expect(await count('used_id_tokens')).toBe(1);
    expect((await prune(9 * MIN)).used_id_tokens).toBe(0);
    expect(await count('used_id_tokens')).toBe(1);
    expect((await prune(10 * MIN + 1_000)).used_id_tokens).toBe(1);
    expect(await count('used_id_tokens')).toBe(0);
  });

  it('expired dashboard sessions and CLI tokens are deleted; live and revoked-but-unexpired ones are kept', async () => {
    const cookie = await signInAs(s, 'restricted@acme.test');
    const token = await cliLoginAs(s, 'restricted@acme.test');
    const revoked = await cliLoginAs(s, 'restricted@acme.test');
    expect((await s.post('/api/v1/cli/auth/logout', {}, bearer(revoked))).status).toBe(200);
    const sessions = await count('dashboard_sessions');
    const report = await prune(13 * DAY);
    expect(report.dashboard_sessions).toBe(0);
    expect(report.cli_tokens).toBe(0);
    expect((await withClock(13 * DAY, () => s.get('/api/dashboard/session', cookie))).status).toBe(200);
    expect((await withClock(13 * DAY, () => s.get('/api/v1/cli/programs', bearer(token)))).status).toBe(200);
    expect((await prune(14 * DAY + 1)).dashboard_sessions).toBe(sessions);
    expect(await count('dashboard_sessions')).toBe(0);
    expect(await count('cli_tokens')).toBeGreaterThanOrEqual(2);
    const tokens = await count('cli_tokens');
    expect((await prune(90 * DAY + MIN)).cli_tokens).toBe(tokens);
    expect(await count('cli_tokens')).toBe(0);
  });

  it('is idempotent: concurrent passes share the work, a second pass deletes nothing', async () => {
    await expiredLoginSessions(1_200, CLI_LOGIN_SESSION_GRACE_MS + MIN);
    const reports = await Promise.all([prune(0), prune(0), prune(0)]);
    expect(reports.reduce((sum, r) => sum + r.cli_login_sessions, 0)).toBe(1_200);
    expect((await prune(0)).cli_login_sessions).toBe(0);
  });
});

describe(`[${dbKind}] outbox events are kept a week after every consumer passed them`, () => {
  const event = (n: number, at: number): NewEvent => ({ type: 'program.updated', programId: 1, data: { program_id: 1, changed: [`prune${n}`] }, occurredAt: at });
  const stored = async (eventId: string) => (await s.db('outbox_events').where({ event_id: eventId }).first('id')) !== undefined;

  it('older than 7 days and passed by the slowest cursor: deleted; newer, or not yet handled: kept', async () => {
    await s.running.deps.outbox.drain();
    const [handledOld] = await appendEvents(s.db, [event(1, s.clock.now())]);
    const [handledNew] = await appendEvents(s.db, [event(2, s.clock.now() + DAY)]);
    await s.running.deps.outbox.drain();
    const aWeekLater = OUTBOX_RETENTION_MS + MIN;
    // A consumer that has not got this far: an old event it has not handled stays.
    await s.db('outbox_cursors').insert({ consumer: 'prune-laggard', last_txid: 0, last_id: 0, updated_at: 0 });
    expect((await prune(aWeekLater)).outbox_events).toBe(0);
    await s.db('outbox_cursors').where({ consumer: 'prune-laggard' }).delete();
    const report = await prune(aWeekLater);
    expect(report.outbox_events).toBeGreaterThanOrEqual(1);
    expect(await stored(handledOld)).toBe(false);
    expect(await stored(handledNew)).toBe(true);
  });

  it('oldest first: a pass ends at the first event still within the week, whatever follows it', async () => {
    await s.running.deps.outbox.drain();
    const t0 = s.clock.now() + 2 * DAY;
    const [first] = await appendEvents(s.db, [event(3, t0)]);
    const [young] = await appendEvents(s.db, [event(4, t0 + DAY)]);
    // Written after `young` with an older time (events are written with the time of their write,
    // so this is a clock's difference, not a rule): it waits for `young`.
    const [behind] = await appendEvents(s.db, [event(5, t0)]);
    await s.running.deps.outbox.drain();
    await prune(2 * DAY + OUTBOX_RETENTION_MS + MIN);
    expect([await stored(first), await stored(young), await stored(behind)]).toEqual([false, true, true]);
    await prune(3 * DAY + OUTBOX_RETENTION_MS + MIN);
    expect([await stored(young), await stored(behind)]).toEqual([false, false]);
  });
});

describe(`[${dbKind}] webhook deliveries are kept 30 days after they finished`, () => {
  it('succeeded or failed for good and older than 30 days: deleted with their attempts; pending or newer: kept', async () => {
    const old = s.clock.now() - WEBHOOK_DELIVERY_RETENTION_MS - MIN;
    const row = (message: string, status: string, at: number) => ({ endpoint_id: 999, message_id: message, event_type: 'sale.created', payload: '{}', status, attempts: 1, retry_until: at, created_at: at });
    await s.db('webhook_deliveries').insert([row('msg_old_ok', 'succeeded', old), row('msg_old_failed', 'failed', old), row('msg_old_pending', 'pending', old), row('msg_new_ok', 'succeeded', s.clock.now())]);
    const ids = Object.fromEntries((await s.db('webhook_deliveries').where({ endpoint_id: 999 }).select('id', 'message_id')).map((r) => [r.message_id, Number(r.id)]));
    await s.db('webhook_attempts').insert(Object.values(ids).map((delivery_id) => ({ delivery_id, attempt: 1, started_at: old, succeeded: true })));
    const report = await prune(0);
    expect(report.webhook_deliveries).toBe(2);
    const left = (await s.db('webhook_deliveries').where({ endpoint_id: 999 }).pluck('message_id')).sort();
    expect(left).toEqual(['msg_new_ok', 'msg_old_pending']);
    expect(Number((await s.db('webhook_attempts').whereIn('delivery_id', [ids.msg_old_ok, ids.msg_old_failed]).count({ n: '*' }).first())!.n)).toBe(0);
    expect(Number((await s.db('webhook_attempts').whereIn('delivery_id', [ids.msg_old_pending, ids.msg_new_ok]).count({ n: '*' }).first())!.n)).toBe(2);
  });
});

describe(`[${dbKind}] tracking log entries are kept TRACKING_LOG_RETENTION_DAYS (default 90)`, () => {
  it('older entries are deleted, newer kept; 0 keeps every entry', async () => {
    const now = s.clock.now();
    await s.db('tracking_logs').insert([
      { program_id: 1, kind: 'prune-test', is_test: true, message: 'old', created_at: now - 91 * DAY },
      { program_id: 1, kind: 'prune-test', is_test: true, message: 'recent', created_at: now - 89 * DAY },
    ]);
    expect((await pruneExpired(s.db, now, { trackingLogRetentionDays: 0 })).tracking_logs).toBe(0);
    expect((await pruneExpired(s.db, now)).tracking_logs).toBeGreaterThanOrEqual(1);
    expect(await s.db('tracking_logs').where({ kind: 'prune-test' }).pluck('message')).toEqual(['recent']);
  });
});

describe(`[${dbKind}] every server process prunes at start and on an interval`, () => {
  it('a process starting on the database deletes what expired', async () => {
    await expiredLoginSessions(3, CLI_LOGIN_SESSION_GRACE_MS + MIN);
    expect(await count('cli_login_sessions')).toBe(3);
    const other = await startServer({ ...s.running.deps.config, port: 0 }, { db: s.db, logger: pino({ level: 'silent' }), now: () => s.clock.now() });
    try {
      expect(await waitFor(async () => (await count('cli_login_sessions')) === 0)).toBe(true);
    } finally {
      await other.close();
    }
  });

  it('then again every interval (on the process clock), until stopped', async () => {
    const schedule = schedulePruning({ db: s.db, now: () => s.clock.now(), logger: pino({ level: 'silent' }) }, 30);
    try {
      await expiredLoginSessions(2, CLI_LOGIN_SESSION_GRACE_MS + MIN);
      expect(await waitFor(async () => (await count('cli_login_sessions')) === 0)).toBe(true);
      // The job reads the clock it is given: a session expired only by that clock goes too.
      await start();
      s.clock.offsetMs = 5 * MIN + CLI_LOGIN_SESSION_GRACE_MS + 1;
      expect(await waitFor(async () => (await count('cli_login_sessions')) === 0)).toBe(true);
    } finally {
      s.clock.offsetMs = 0;
      await schedule.stop();
    }
    await expiredLoginSessions(1, CLI_LOGIN_SESSION_GRACE_MS + MIN);
    await new Promise((r) => setTimeout(r, 150));
    expect(await count('cli_login_sessions')).toBe(1);
    await prune(0);
  });
});
