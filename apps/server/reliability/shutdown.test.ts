/** SIGTERM: the server stops accepting, finishes the requests in flight (clicks and their events committed), closes its pools and exits 0. */
import { afterAll, describe, expect, it } from 'vitest';
import { postJson, seed, spawnServer } from './helpers/cluster.js';
import { freshDatabase, query, type Database } from './helpers/databases.js';
import { programsFixture } from './helpers/fixture.js';

let db: Database | undefined;
afterAll(() => db?.drop());

describe('graceful shutdown', () => {
  it('answers every request in flight, commits their clicks, and exits 0', async () => {
    db = await freshDatabase('sqlite');
    const env = { DATABASE_URL: db.url, TRUST_PROXY: '1', LOG_LEVEL: 'warn' };
    await seed(env, programsFixture(1).fixture);
    const server = await spawnServer(env);
    const inFlight = Array.from({ length: 40 }, (_, i) =>
      postJson(`${server.url}/api/v1/track/click`, { affiliate_url: 'https://rel.test/?aff=p1' }, { 'x-forwarded-for': `192.0.2.${i + 1}` }).catch(() => ({ status: 0, body: null, headers: new Headers() })),
    );
    await new Promise((r) => setTimeout(r, 5));
    const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
    server.child.kill('SIGTERM');
    const answers = await Promise.all(inFlight);
    expect(await exited).toBe(0);
    const ok = answers.filter((a) => a.status === 200);
    // Requests that reached the server before SIGTERM were answered; none was cut off with a 5xx.
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    const [row] = await query<{ n: number }>(db, 'select count(*) as n from click_events');
    expect(Number(row.n)).toBe(ok.length);
    // Their batches' clicks.recorded events, committed with them, count the same clicks.
    const events = await query<{ payload: string }>(db, `select payload from outbox_events where type = 'clicks.recorded'`);
    expect(events.reduce((n, e) => n + (JSON.parse(e.payload) as { clicks: number }).clicks, 0)).toBe(ok.length);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('logs "stopped" as its last line, with the signal and how long the stop took, after SIGTERM and after SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const stopDb = await freshDatabase('sqlite');
      try {
        const server = await spawnServer({ DATABASE_URL: stopDb.url, LOG_LEVEL: 'info', SHUTDOWN_GRACE_MS: '200' });
        const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
        server.child.kill(signal);
        expect(await exited).toBe(0);
        // The log's JSON lines (Node's own warnings, if any, go to stderr as plain text).
        const lines = server.output().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg: string; signal?: string; ms?: number });
        const last = lines[lines.length - 1];
        expect(last).toMatchObject({ msg: 'stopped', signal, ms: expect.any(Number) });
        // SIGTERM drains for the grace period first; SIGINT does not.
        if (signal === 'SIGTERM') expect(last.ms).toBeGreaterThanOrEqual(200);
        expect(lines.filter((line) => line.msg === 'shutting down')).toHaveLength(1);
      } finally {
        await stopDb.drop();
      }
    }
  });
});
