/**
 * A customer's program, partner and referral link outlive it: Reftrack never deletes those rows
 * (a link is deactivated), and the database refuses a DELETE of one that a customer refers to —
 * on SQLite by the customers table's foreign keys, on PostgreSQL by a guard on the three tables
 * (migration 20261127150000), which lets every click's customer row go in without a per-row key
 * check (docs/decisions.md, "Customers' parent rows: guarded, not foreign keys").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { click } from './helpers/flows.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const counts = async () => ({
  programs: Number((await s.db('programs').count({ n: '*' }).first())?.n),
  partners: Number((await s.db('partners').count({ n: '*' }).first())?.n),
  links: Number((await s.db('referral_links').count({ n: '*' }).first())?.n),
});

describe(`[${dbKind}] customers' parent rows`, () => {
  it('a referral link, partner or program that a customer refers to cannot be deleted', async () => {
    const clickId = await click(s, 'pat20');
    const customer = await s.db('customers').where({ click_id: clickId }).first('program_id', 'partner_id', 'link_id');
    expect(customer?.link_id).toBeTruthy();
    const before = await counts();
    await expect(s.db('referral_links').where({ id: customer.link_id }).delete()).rejects.toThrow();
    await expect(s.db('partners').where({ id: customer.partner_id }).delete()).rejects.toThrow();
    await expect(s.db('programs').where({ id: customer.program_id }).delete()).rejects.toThrow();
    expect(await counts()).toEqual(before);
  });

  it.runIf(dbKind === 'postgres')('PostgreSQL: any DELETE of a link is refused with a hint to deactivate it, and customers carry no per-row key checks', async () => {
    const [row] = await s.db('referral_links').insert({ program_id: 1, partner_id: null, short_link: 'unused-link', active: true, clicks: 0, created_at: Date.now() }).returning('id');
    await expect(s.db('referral_links').where({ id: row.id }).delete()).rejects.toMatchObject({ code: '23001', hint: expect.stringContaining('Deactivate') });
    expect(await s.db('referral_links').where({ id: row.id }).first('id')).toBeTruthy();
    const keys = await s.db.raw(`select conname from pg_constraint where conrelid = 'customers'::regclass and contype = 'f'`);
    expect(keys.rows).toEqual([]);
  });
});
