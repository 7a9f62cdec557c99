/**
 * Each click batch appends, in its own transaction, one `clicks.recorded` event per program to the
 * outbox (src/db/click-batcher.ts, its writers, migration 20261124140000 on PostgreSQL): the
 * clicks per link, the first and last click's time, the program's workspace. A batch that fails
 * writes neither its clicks nor its events. The click's answer is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_EVENT_VERSIONS } from '@reftrack/contract';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { recordClick, resolveLink } from '../src/domain/click.js';

let s: TestServer;
/** Link ids by short link (pat20 and sam10 of program 1, open1 of program 2). */
const link: Record<string, number> = {};
beforeAll(async () => {
  s = await startTestServer();
  for (const row of await s.db('referral_links').select('id', 'short_link')) link[row.short_link] = Number(row.id);
});
afterAll(() => s?.close());

const CLICK = '/api/v1/track/click';
const EVENT_ID = /^evt_[0-9A-Za-z]{7}[0-9A-Za-z]{17}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface ClicksRecorded {
  id: number;
  event_id: string;
  workspace_id: number;
  program_id: number;
  version: number;
  actor: string | null;
  occurred_at: number;
  txid?: number;
  data: { program_id: number; clicks: number; links: Array<{ link_id: number; partner_id: number; clicks: number }>; first_at: string; last_at: string };
}

/** The outbox's clicks.recorded rows after `afterId`, in id order. */
async function clicksRecordedAfter(afterId: number): Promise<ClicksRecorded[]> {
  const rows = await s.db('outbox_events').where('id', '>', afterId).andWhere({ type: 'clicks.recorded' }).orderBy('id');
  return rows.map((r) => ({
    id: Number(r.id),
    event_id: r.event_id,
    workspace_id: Number(r.workspace_id),
    program_id: Number(r.program_id),
    version: Number(r.version),
    actor: r.actor,
    occurred_at: Number(r.occurred_at),
    ...(r.txid !== undefined ? { txid: Number(r.txid) } : {}),
    data: JSON.parse(r.payload),
  }));
}

async function lastOutboxId(): Promise<number> {
  const row = await s.db('outbox_events').max({ id: 'id' }).first();
  return Number(row?.id ?? 0);
}

/** The milliseconds an id's time prefix (after `evt_`) stands for. */
function idTime(eventId: string): number {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return [...eventId.slice(4, 11)].reduce((ms, c) => ms * 62 + alphabet.indexOf(c), 0);
}

async function counters(): Promise<Record<string, number>> {
  const links = await s.db('referral_links').select('short_link', 'clicks');
  return Object.fromEntries(links.map((l) => [l.short_link, Number(l.clicks)]));
}

/**
 * Submits clicks in one turn of the event loop, through the route's own recordClick: they form one
 * batch (fewer than the batcher's early hand-off size). Click i is made at `at + i * spacingMs` on
 * the server's clock.
 */
async function oneBatch(shortLinks: string[], at = Date.now(), spacingMs = 0): Promise<Array<PromiseSettledResult<unknown>>> {
  const resolved = await Promise.all(shortLinks.map((l) => resolveLink(s.running.deps, `https://acme.test/?aff=${l}`)));
  const clockNow = s.clock.now;
  let time = at;
  s.clock.now = () => time;
  try {
    const pending = resolved.map((l, i) => {
      time = at + i * spacingMs;
      return recordClick(s.running.deps, { ip: '10.9.9.9', headers: {} }, {}, l);
    });
    return await Promise.allSettled(pending);
  } finally {
    s.clock.now = clockNow;
  }
}

describe(`[${dbKind}] clicks.recorded: one outbox event per program and batch`, () => {
  it('a click writes one event with its link, partner, time and the program’s workspace; the answer is unchanged', async () => {
    const before = await lastOutboxId();
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=pat20' });
    expect(res.status).toBe(200);
    // The answer, byte for byte: nothing about events reaches the client.
    expect(res.text).toBe(JSON.stringify({ success: true, click_id: res.body.click_id, partner_code: 'pat', cookie_window_days: 60 }));
    const clickRow = await s.db('click_events').where({ click_id: res.body.click_id }).first('click_timestamp');
    const at = Number(clickRow.click_timestamp);
    const events = await clicksRecordedAfter(before);
    expect(events).toHaveLength(1);
    const [e] = events;
    expect(e).toMatchObject({ workspace_id: 1, program_id: 1, version: DOMAIN_EVENT_VERSIONS['clicks.recorded'], actor: null, occurred_at: at });
    const hour = new Date(Math.floor(at / 3_600_000) * 3_600_000).toISOString();
    expect(e.data).toEqual({
      program_id: 1,
      clicks: 1,
      links: [{ link_id: link.pat20, partner_id: 1, clicks: 1 }],
      first_at: new Date(at).toISOString(),
      last_at: new Date(at).toISOString(),
      rollups: [{ link_id: link.pat20, partner_id: 1, hour, dims: expect.any(Array), clicks: 1, unique_clicks: expect.any(Number), bot_clicks: 0 }],
    });
    expect(e.event_id).toMatch(EVENT_ID);
    // Time-first: the id starts with the time the event occurred.
    expect(idTime(e.event_id)).toBe(at);
    if (dbKind === 'postgres') expect(e.txid).toBeGreaterThan(0);
  });

  it('one batch over two programs: one event each, clicks counted per link, first and last click times', async () => {
    const before = await lastOutboxId();
    const t0 = Date.now();
    const results = await oneBatch(['pat20', 'sam10', 'open1', 'pat20', 'sam10', 'pat20', 'open1', 'sam10', 'pat20', 'open1', 'pat20', 'sam10'], t0, 1000);
    expect(results.every((r) => r.status === 'fulfilled')).toBe(true);
    const events = await clicksRecordedAfter(before);
    expect(events.map((e) => e.program_id)).toEqual([1, 2]);
    const [p1, p2] = events;
    expect(p1.data.program_id).toBe(1);
    expect(p1.data.clicks).toBe(9);
    expect(p1.data.links).toEqual([
      { link_id: link.pat20, partner_id: 1, clicks: 5 },
      { link_id: link.sam10, partner_id: 2, clicks: 4 },
    ]);
    expect(p2.data).toMatchObject({ program_id: 2, clicks: 3, links: [{ link_id: link.open1, partner_id: 1, clicks: 3 }] });
    for (const e of events) {
      expect(e.workspace_id).toBe(1);
      expect(e.event_id).toMatch(EVENT_ID);
      expect(e.data.first_at).toMatch(ISO);
      expect(e.data.last_at).toMatch(ISO);
      expect(e.occurred_at).toBe(Date.parse(e.data.last_at));
    }
    // Click i was made i seconds after t0: program 1 holds clicks 0 to 11, program 2 clicks 2 to 9.
    const time = (i: number) => new Date(t0 + i * 1000).toISOString();
    expect([p1.data.first_at, p1.data.last_at, p2.data.first_at, p2.data.last_at]).toEqual([time(0), time(11), time(2), time(9)]);
    // The times are the click rows' own.
    const rows = await s.db('click_events').where('program_id', 2).orderBy('id', 'desc').limit(3).select('click_timestamp');
    expect(rows.map((r) => Number(r.click_timestamp)).sort((a, b) => a - b)).toEqual([t0 + 2000, t0 + 6000, t0 + 9000]);
    // One transaction: on PostgreSQL both rows carry the batch's transaction id.
    if (dbKind === 'postgres') expect(p1.txid).toBe(p2.txid);
  });

  it('the rollups: the batch’s clicks summed per link, UTC hour and dimensions; bots only as bot clicks; a batch of bots alone still writes its event', async () => {
    const [pat20, open1] = await Promise.all(['pat20', 'open1'].map((l) => resolveLink(s.running.deps, `https://acme.test/?aff=${l}`)));
    const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0';
    const SLACK = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
    const visitor = { ip: '10.7.7.1', headers: {} };
    const clockNow = s.clock.now;
    const batch = async (clicks: Array<[typeof pat20, string, string]>) => {
      let time = 0;
      s.clock.now = () => time;
      try {
        const pending = clicks.map(([l, at, ua]) => {
          time = Date.parse(at);
          return recordClick(s.running.deps, visitor, { user_agent: ua }, l);
        });
        expect((await Promise.allSettled(pending)).every((r) => r.status === 'fulfilled')).toBe(true);
      } finally {
        s.clock.now = clockNow;
      }
    };
    let before = await lastOutboxId();
    await batch([
      [pat20, '2026-04-01T10:59:58.000Z', FIREFOX],
      [pat20, '2026-04-01T10:59:59.000Z', SLACK],
      [pat20, '2026-04-01T10:59:59.000Z', FIREFOX],
      [pat20, '2026-04-01T11:00:00.000Z', FIREFOX],
    ]);
    const [event] = await clicksRecordedAfter(before);
    const firefox = ['', 'desktop', 'Firefox', '', '', '', ''];
    expect(event.data).toEqual({
      program_id: 1,
      clicks: 3,
      links: [{ link_id: link.pat20, partner_id: 1, clicks: 3 }],
      first_at: '2026-04-01T10:59:58.000Z',
      last_at: '2026-04-01T11:00:00.000Z',
      rollups: [
        // The same visitor on the same link: unique once, in the first hour.
        { link_id: link.pat20, partner_id: 1, hour: '2026-04-01T10:00:00.000Z', dims: firefox, clicks: 2, unique_clicks: 1, bot_clicks: 0 },
        { link_id: link.pat20, partner_id: 1, hour: '2026-04-01T10:00:00.000Z', dims: null, clicks: 0, unique_clicks: 0, bot_clicks: 1 },
        { link_id: link.pat20, partner_id: 1, hour: '2026-04-01T11:00:00.000Z', dims: firefox, clicks: 1, unique_clicks: 0, bot_clicks: 0 },
      ],
    });
    before = await lastOutboxId();
    await batch([[open1, '2026-04-01T12:30:00.000Z', SLACK]]);
    const [bots] = await clicksRecordedAfter(before);
    expect(bots.program_id).toBe(2);
    expect(bots.data).toEqual({
      program_id: 2,
      clicks: 0,
      links: [],
      first_at: '2026-04-01T12:30:00.000Z',
      last_at: '2026-04-01T12:30:00.000Z',
      rollups: [{ link_id: link.open1, partner_id: 1, hour: '2026-04-01T12:00:00.000Z', dims: null, clicks: 0, unique_clicks: 0, bot_clicks: 1 }],
    });
  });

  it('concurrent clicks over HTTP: every click counted once across the events, never two events of a program in one batch', async () => {
    const before = await lastOutboxId();
    const sent: Record<string, number> = { pat20: 7, sam10: 5, open1: 4 };
    const answers = await Promise.all(Object.entries(sent).flatMap(([aff, n]) => Array.from({ length: n }, () => s.post(CLICK, { affiliate_url: `https://acme.test/?aff=${aff}` }))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    const events = await clicksRecordedAfter(before);
    const perLink: Record<number, number> = {};
    for (const e of events) {
      expect(e.data.program_id).toBe(e.program_id);
      expect(e.data.clicks).toBe(e.data.links.reduce((n, l) => n + l.clicks, 0));
      for (const l of e.data.links) perLink[l.link_id] = (perLink[l.link_id] ?? 0) + l.clicks;
    }
    expect(perLink).toEqual({ [link.pat20]: 7, [link.sam10]: 5, [link.open1]: 4 });
    if (dbKind === 'postgres') {
      const keys = events.map((e) => `${e.txid}:${e.program_id}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  it('the outbox runner reads the events (its poll finds them; a drain here): each consumer’s cursor moves past them', async () => {
    const before = await lastOutboxId();
    const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=sam10' });
    expect(res.status).toBe(200);
    const [event] = await clicksRecordedAfter(before);
    expect(event.data.links).toEqual([{ link_id: link.sam10, partner_id: 2, clicks: 1 }]);
    // On PostgreSQL a pass reads only rows older than every running transaction (of any test
    // sharing the server), so it may take a few passes.
    const passed = async () => {
      const cursors = await s.db('outbox_cursors').select('last_id');
      return cursors.length > 0 && cursors.every((c) => Number(c.last_id) >= event.id);
    };
    const deadline = Date.now() + 10_000;
    do await s.running.deps.outbox.drain();
    while (!(await passed()) && Date.now() < deadline);
    expect(await passed()).toBe(true);
  });
});

describe(`[${dbKind}] a failed batch writes neither clicks nor events`, () => {
  /** Makes the database refuse rows of `table` for program 2 (a trigger), for the length of `run`. */
  async function refusing(table: 'outbox_events' | 'click_events', run: () => Promise<void>): Promise<void> {
    if (dbKind === 'sqlite') {
      await s.db.raw(`create trigger refuse_program_2 before insert on ${table} when new.program_id = 2 begin select raise(abort, 'refused for the test'); end`);
    } else {
      await s.db.raw(`create function refuse_program_2() returns trigger language plpgsql as $$ begin raise exception 'refused for the test'; end $$`);
      await s.db.raw(`create trigger refuse_program_2 before insert on ${table} for each row when (new.program_id = 2) execute function refuse_program_2()`);
    }
    try {
      await run();
    } finally {
      if (dbKind === 'sqlite') await s.db.raw('drop trigger refuse_program_2');
      else {
        await s.db.raw(`drop trigger refuse_program_2 on ${table}`);
        await s.db.raw('drop function refuse_program_2');
      }
    }
  }

  for (const table of ['outbox_events', 'click_events'] as const) {
    it(`when the ${table === 'outbox_events' ? 'event insert' : 'click insert'} fails, the batch's clicks of every program and its events are rolled back`, async () => {
      const before = await lastOutboxId();
      const clicksBefore = Number((await s.db('click_events').count({ n: '*' }).first())!.n);
      const customersBefore = Number((await s.db('customers').count({ n: '*' }).first())!.n);
      const countersBefore = await counters();
      await refusing(table, async () => {
        const results = await oneBatch(['pat20', 'open1', 'sam10']);
        expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
        // Over HTTP: the route's 500, as for any failed batch.
        const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=open1' });
        expect(res.status).toBe(500);
        expect(res.body).toMatchObject({ data: null, error: { status: 500, message: 'Click tracking failed' } });
      });
      expect(await clicksRecordedAfter(before)).toEqual([]);
      expect(Number((await s.db('click_events').count({ n: '*' }).first())!.n)).toBe(clicksBefore);
      expect(Number((await s.db('customers').count({ n: '*' }).first())!.n)).toBe(customersBefore);
      expect(await counters()).toEqual(countersBefore);
      // The next batch writes again, clicks and event.
      const res = await s.post(CLICK, { affiliate_url: 'https://acme.test/?aff=open1' });
      expect(res.status).toBe(200);
      const after = await clicksRecordedAfter(before);
      expect(after).toHaveLength(1);
      expect(after[0].data).toMatchObject({ program_id: 2, clicks: 1 });
    });
  }
});
