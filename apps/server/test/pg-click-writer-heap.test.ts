/**
 * The click writer's connections keep their heap too (db/pg-backend-heap.ts, run by the writer
 * pool's `onConnect` in db/postgres-click-writer.ts): once its backends have committed a few
 * batches, further batches fault in only the pages their new rows land on (shared buffers the
 * backend had not touched yet). Without the statement every batch also grows the backend's heap
 * again and faults it in (docs/performance.md, "PostgreSQL's heap, kept between batches").
 *
 * Measured here, 900 clicks in bursts of 150: 0.28–0.33 faults per click with the statement,
 * 1.02–1.17 with `onConnect` removed from the writer's pool. The writer's connections are found
 * through this process's own sockets, so writers of other test files running at the same time are
 * not counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { click } from './helpers/flows.js';
import { ownTcpPorts, pageFaults } from './helpers/proc.js';

/** Clicks sent at once, so the batcher commits them in batches of many clicks. */
const BURST = 150;
const CLICKS = 900;

async function bursts(s: TestServer, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await Promise.all(Array.from({ length: BURST }, () => click(s)));
}

describe.skipIf(dbKind !== 'postgres')('[postgres] the click writer keeps its heap between batches', () => {
  let s: TestServer;
  let pids: number[];
  beforeAll(async () => {
    s = await startTestServer();
    // The writer's pool opens its connections on the first batches; their heaps grow to what a batch needs.
    await bursts(s, 5);
    const { rows } = await s.db.raw<{ rows: Array<{ pid: number }> }>("select pid from pg_stat_activity where application_name = 'reftrack click writer' and client_port = any(?)", [ownTcpPorts()]);
    pids = rows.map((r) => Number(r.pid));
  });
  afterAll(() => s?.close());

  it('its backends fault in no heap on further batches: well under one page per click', async () => {
    expect(pids.length).toBeGreaterThan(0);
    const before = pids.reduce((n, pid) => n + pageFaults(pid), 0);
    await bursts(s, CLICKS / BURST);
    const faults = pids.reduce((n, pid) => n + pageFaults(pid), 0) - before;
    expect(faults / CLICKS).toBeLessThan(0.6);
  });
});
