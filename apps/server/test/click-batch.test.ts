/**
 * The click batch's sums (db/click-batcher.ts, docs/analytics.md): one batch's clicks become their
 * rows, each link's and each enrollment's counter increment, and per program one `clicks.recorded`
 * event whose rollup entries sum the clicks per link, UTC hour and dimensions. Run on the batcher
 * itself, with a writer that keeps what it is given: the sums are the same on either database.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '@reftrack/contract';
import { ClickBatcher, type ClickWrite } from '../src/db/click-batcher.js';
import type { BatchRows, BatchWriter } from '../src/db/click-rows.js';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-02T10:15:00Z');
const CHROME = ['US', 'desktop', 'Chrome', '', '', '', ''];
const FIREFOX = ['DE', 'desktop', 'Firefox', 'news.test', '', '', ''];

let n = 0;
/** A click of `link` (partner and program as given) at `at`, from a visitor of its own. */
function write(link: { id: number; partner: number; program: number }, at: number, dims: string[], options: { bot?: boolean; clickId?: string } = {}): ClickWrite {
  const clickId = options.clickId ?? `c${++n}`;
  const bot = options.bot ?? false;
  return {
    event: [link.program, link.id, link.partner, clickId, false, at, bot],
    linkId: link.id,
    partnerId: link.partner,
    programId: link.program,
    at,
    bot,
    visitors: [{ clickId }, { address: `10.0.0.${n}`, userAgent: 'ua' }],
    // Each click's values are its own strings, as the click lane builds them: compared by value.
    dims: bot ? null : dims.map((value) => `${value}`),
  };
}

/** Submits the clicks in one turn of the event loop (so one batch) and returns what the writer was given. */
async function batchOf(clicks: ClickWrite[]): Promise<BatchRows[]> {
  const written: BatchRows[] = [];
  const writer: BatchWriter = {
    maxInFlight: 1,
    async write(rows) {
      written.push(rows);
    },
    async close() {},
  };
  const batcher = new ClickBatcher(writer);
  await Promise.all(clicks.map((c) => batcher.submit(c)));
  return written;
}

const recorded = (rows: BatchRows) => rows.outbox.map((row) => ({ programId: row[3], data: JSON.parse(String(row[4])) as DomainEvent<'clicks.recorded'>['data'] }));

const A = { id: 1, partner: 7, program: 1 };
const B = { id: 2, partner: 7, program: 1 };
const C = { id: 3, partner: 8, program: 2 };

describe('the click batch: rows, counters and the clicks.recorded event', () => {
  it('clicks of one link, hour and dimensions are one rollup entry; another dimension value or hour is another, in the order of their first click', async () => {
    const [rows] = await batchOf([write(A, T0, CHROME), write(A, T0 + 1000, FIREFOX), write(A, T0 + 2000, CHROME), write(A, T0 + HOUR, CHROME), write(A, T0 + 3000, FIREFOX)]);
    const [event] = recorded(rows);
    expect(event.data.rollups.map((r) => [r.hour, r.dims, r.clicks, r.unique_clicks])).toEqual([
      ['2026-11-02T10:00:00.000Z', CHROME, 2, 2],
      ['2026-11-02T10:00:00.000Z', FIREFOX, 2, 2],
      ['2026-11-02T11:00:00.000Z', CHROME, 1, 1],
    ]);
    expect(event.data.first_at).toBe(new Date(T0).toISOString());
    expect(event.data.last_at).toBe(new Date(T0 + HOUR).toISOString());
  });

  it('dimension values differing in one position only are not summed together', async () => {
    const [rows] = await batchOf([write(A, T0, CHROME), write(A, T0, [...CHROME.slice(0, 6), 'spring'])]);
    expect(recorded(rows)[0].data.rollups.map((r) => r.dims?.[6])).toEqual(['', 'spring']);
  });

  it("a link's bot clicks of one hour are one entry whatever their dimensions, and move no link or enrollment counter", async () => {
    const [rows] = await batchOf([write(A, T0, CHROME, { bot: true }), write(A, T0, FIREFOX, { bot: true }), write(A, T0, CHROME)]);
    const [event] = recorded(rows);
    expect(event.data.rollups.map((r) => [r.dims, r.clicks, r.bot_clicks])).toEqual([
      [null, 0, 2],
      [CHROME, 1, 0],
    ]);
    expect(event.data.clicks).toBe(1);
    expect(rows.links).toEqual([{ id: A.id, n: 1, at: T0, partnerId: A.partner, programId: A.program }]);
    expect(rows.enrollments).toEqual([{ partnerId: A.partner, programId: A.program, n: 1, at: T0 }]);
    expect(rows.events).toHaveLength(3);
  });

  it("an enrollment's counter is the sum of its links' clicks, with the latest click's time; counters and events go in key order", async () => {
    const [rows] = await batchOf([write(C, T0 + 5, CHROME), write(B, T0 + 9, CHROME), write(A, T0, CHROME), write(B, T0 + 2, CHROME), write(A, T0 + 4, FIREFOX)]);
    expect(rows.links.map(({ id, n, at }) => [id, n, at])).toEqual([
      [A.id, 2, T0 + 4],
      [B.id, 2, T0 + 9],
      [C.id, 1, T0 + 5],
    ]);
    expect(rows.enrollments).toEqual([
      { partnerId: 7, programId: 1, n: 4, at: T0 + 9 },
      { partnerId: 8, programId: 2, n: 1, at: T0 + 5 },
    ]);
    const events = recorded(rows);
    expect(events.map((e) => [e.programId, e.data.clicks, e.data.links])).toEqual([
      [1, 4, [{ link_id: A.id, partner_id: 7, clicks: 2 }, { link_id: B.id, partner_id: 7, clicks: 2 }]],
      [2, 1, [{ link_id: C.id, partner_id: 8, clicks: 1 }]],
    ]);
    // Program 1's entries: link B's first click came before link A's.
    expect(events[0].data.rollups.map((r) => [r.link_id, r.dims?.[2], r.clicks])).toEqual([
      [B.id, 'Chrome', 2],
      [A.id, 'Chrome', 1],
      [A.id, 'Firefox', 1],
    ]);
  });

  it('a visitor seen again on the link counts as a click, not as a unique click', async () => {
    const [rows] = await batchOf([write(A, T0, CHROME, { clickId: 'same' }), write(A, T0 + 1, CHROME, { clickId: 'same' }), write(B, T0 + 2, CHROME, { clickId: 'same' })]);
    expect(recorded(rows)[0].data.rollups.map((r) => [r.link_id, r.clicks, r.unique_clicks])).toEqual([
      [A.id, 2, 1],
      [B.id, 1, 1],
    ]);
  });
});
