/**
 * Rolling upgrades (docs/operator.md, "Upgrades": expand, then contract). A newer release has
 * migrated the database — one more migration this release does not know, which adds a column, as
 * expand-only migrations do. This release must still start on it (a rollback, or an old process
 * restarting during the rollout) and work; and it must refuse a database that is both newer and
 * missing migrations of its own, since no order of applying them is known to be safe.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, dbKind, KEY1, startTestServer, TEST_BROWSER_USER_AGENT, type TestServer } from './helpers/index.js';
import { serverLead } from './helpers/flows.js';
import { startServer } from '../src/server.js';
import { migrationStatus } from '../src/db/migrate.js';

const NEWER = '20991231000000_newer_release_adds_a_column.js';
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const schema = () => (s.running.deps.config.database.client === 'postgres' ? s.running.deps.config.database.schema : undefined);

describe(`[${dbKind}] upgrades: this release on a schema a newer release expanded`, () => {
  it('starts, leaves the newer migration alone, and records clicks, leads and sales', async () => {
    // What the newer release's migrate did: an added nullable column, and its row in knex_migrations.
    await s.db.schema.alterTable('sale_events', (t) => t.text('newer_release_note'));
    await s.db('knex_migrations').insert({ name: NEWER, batch: 99, migration_time: new Date() });
    const status = await migrationStatus(s.db, schema());
    expect(status.pending).toEqual([]);
    expect(status.unknown).toEqual([NEWER]);

    const again = await startServer({ ...s.running.deps.config, port: 0 }, { db: s.db, logger: pino({ level: 'silent' }) });
    try {
      const res = await fetch(`${again.url}/api/v1/track/click`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.77', 'user-agent': TEST_BROWSER_USER_AGENT }, body: JSON.stringify({ affiliate_url: 'https://acme.test/?aff=pat20' }) });
      expect(res.status).toBe(200);
      const clickId = ((await res.json()) as { click_id: string }).click_id;
      await serverLead(s, clickId, 'upgrade-customer');
      const sale = await fetch(`${again.url}/api/v1/track/sale`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(KEY1) }, body: JSON.stringify({ transaction_id: `upgrade-${dbKind}-${Date.now()}`, amount_cents: 1000, click_id: clickId }) });
      expect(sale.status, await sale.clone().text()).toBe(200);
      const ready = await fetch(`${again.url}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await again.close();
    }
    expect((await s.db('knex_migrations').where({ name: NEWER })).length).toBe(1);
  });

  it('refuses to start on a database that is newer and lacks one of its own migrations, naming both', async () => {
    const [own] = (await migrationStatus(s.db, schema())).applied.slice(-1);
    await s.db('knex_migrations').where({ name: own }).delete();
    try {
      await expect(startServer({ ...s.running.deps.config, port: 0 }, { db: s.db, logger: pino({ level: 'silent' }) })).rejects.toThrow(
        `the database has migrations of a newer release (${NEWER}) and lacks some of this release (${own}): start the newer release instead`,
      );
    } finally {
      await s.db('knex_migrations').insert({ name: own, batch: 1, migration_time: new Date() });
    }
  });
});

