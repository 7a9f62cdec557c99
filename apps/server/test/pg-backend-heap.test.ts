/**
 * PostgreSQL backends that keep their heap between transactions (db/pg-backend-heap.ts): a backend
 * that ran KEEP_HEAP_SQL touches no new pages when it repeats a transaction of a few MB, where
 * one that did not gives the memory back and faults it in again every time. Read from the
 * backend's own page-fault counter in /proc, so PostgreSQL has to run on this host (it does in CI).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEEP_HEAP_SQL } from '../src/db/pg-backend-heap.js';
import { createDb, type Db } from '../src/db/knex.js';
import { dbKind, postgresUrl } from './helpers/index.js';
import { pageFaults } from './helpers/proc.js';

/** A statement whose memory (a sort of 20,000 texts, about 3 MB) is freed when it ends. */
const FEW_MB = 'select count(*) as n from (select g::text as t from generate_series(1, 20000) g order by 1 desc) s';

/** Page faults per run of FEW_MB, over ten runs after a first one. */
async function faultsPerRun(run: (sql: string) => Promise<unknown>, pid: number): Promise<number> {
  await run(FEW_MB);
  const before = pageFaults(pid);
  for (let i = 0; i < 10; i++) await run(FEW_MB);
  return (pageFaults(pid) - before) / 10;
}

describe.skipIf(dbKind !== 'postgres')('[postgres] backends keep their heap between transactions', () => {
  let url: string;
  beforeAll(async () => {
    const found = await postgresUrl();
    if (!found) throw new Error('PostgreSQL unavailable');
    url = found;
  });

  async function withClient<T>(work: (client: pg.Client, pid: number) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      return await work(client, rows[0].pid);
    } finally {
      await client.end();
    }
  }

  it('a backend that did not run the statement faults its memory in again on every run (the premise: glibc trims the heap)', async () => {
    const faults = await withClient((client, pid) => faultsPerRun((sql) => client.query(sql), pid));
    expect(faults).toBeGreaterThan(100);
  });

  it('a backend that ran it faults no new pages on the runs after its first', async () => {
    const faults = await withClient(async (client, pid) => {
      await client.query(KEEP_HEAP_SQL);
      return faultsPerRun((sql) => client.query(sql), pid);
    });
    expect(faults).toBeLessThan(10);
  });

  describe("the server's knex pool runs it on each new connection", () => {
    let db: Db;
    beforeAll(() => {
      // One connection, so that every statement below runs on the same backend.
      db = createDb({ client: 'postgres', connectionString: url, poolMax: 1 });
    });
    afterAll(() => db?.destroy());

    it('its connection faults no new pages on repeated runs', async () => {
      const pid = Number((await db.raw('select pg_backend_pid() as pid')).rows[0].pid);
      expect(await faultsPerRun((sql) => db.raw(sql), pid)).toBeLessThan(10);
    });
  });
});
