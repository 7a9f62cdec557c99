/**
 * Rounding of money (docs/decisions.md, "Commission" and "Platform fee"; src/domain/commission.ts):
 * a commission is rounded to the nearest minor unit, halves up, in exact integer arithmetic; the
 * platform fee is 20% of the commission, rounded the same way. Every amount is checked three ways:
 * the sale answer's `commission_amount_cents`, the stored `commissions` row and the stored
 * `platform_fees` row.
 *
 * The fee is a fifth of a whole number of minor units, so its fraction is .0, .2, .4, .6 or .8 and
 * never exactly a half: its tests take .6 (rounds up) and .4 (rounds down).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fixture } from '../src/seed/fixture.js';
import { dbKind, startTestServer, type TestServer } from './helpers/index.js';
import { click, sale, serverLead } from './helpers/flows.js';

const key = (name: string) => `aff_rounding${name}`.padEnd(36, 'x');

/** One program per rate; partner 1 is enrolled in each through a link named like the program. */
const PROGRAMS = {
  pct10: { id: 1, commission_type: 'percent', commission_rate: 10 },
  pct12_3456: { id: 2, commission_type: 'percent', commission_rate: 12.3456 },
  pct4_35: { id: 3, commission_type: 'percent', commission_rate: 4.35 },
  rec12_5: { id: 4, commission_type: 'recurring_percent', commission_rate: 12.5 },
  fix12_5: { id: 5, commission_type: 'fixed', commission_rate: 12.5 },
  fix12_4999: { id: 6, commission_type: 'recurring_fixed', commission_rate: 12.4999 },
} as const;
type ProgramName = keyof typeof PROGRAMS;

function fixture(): Fixture {
  const names = Object.keys(PROGRAMS) as ProgramName[];
  return {
    accounts: [{ email: 'owner@acme.test', name: 'Ada Owner' }],
    workspaces: [{ id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }] }],
    programs: names.map((name) => ({ ...PROGRAMS[name], workspace: 1, name, domain: `${name}.test`, api_key: key(name) })),
    partners: [{ id: 1, name: 'Pat', email: 'pat@p.test', code: 'pat' }],
    enrollments: names.map((name) => ({ partner: 1, program: PROGRAMS[name].id })),
    links: names.map((name) => ({ short_link: name, partner: 1, program: PROGRAMS[name].id, active: true })),
  };
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ fixture: fixture() });
});
afterAll(() => s?.close());

let n = 0;

/** A new customer of `program` (click, server lead). */
async function customer(program: ProgramName): Promise<string> {
  const clickId = await click(s, program);
  const customerKey = `round-${dbKind}-${++n}`;
  await serverLead(s, clickId, customerKey, key(program));
  return customerKey;
}

/** One sale; its commission as answered and as stored, and its stored platform fee. */
async function sell(program: ProgramName, customerKey: string, amount: number, currency = 'USD') {
  const res = await sale(s, { transaction_id: `round-${dbKind}-${++n}-${Date.now()}`, customer_key: customerKey, amount_cents: amount, currency }, key(program));
  expect(res.status, res.text).toBe(200);
  expect(res.body.data).toMatchObject({ attributed: true, commission_id: expect.any(Number), currency });
  const commission = await s.db('commissions').where({ sale_id: res.body.data.sale_id }).first('id', 'amount_cents', 'currency');
  const fee = await s.db('platform_fees').where({ commission_id: commission.id }).first('amount_cents', 'currency', 'rate_bps');
  expect(commission.currency).toBe(currency);
  expect(fee).toMatchObject({ currency });
  expect(Number(fee.rate_bps)).toBe(2000);
  return { answered: res.body.data.commission_amount_cents as number, stored: Number(commission.amount_cents), fee: Number(fee.amount_cents) };
}

/** A first sale by a new customer. */
const firstSale = async (program: ProgramName, amount: number, currency = 'USD') => sell(program, await customer(program), amount, currency);

describe(`[${dbKind}] 2.6 commission: rate% of the sale, to the nearest minor unit, halves up`, () => {
  it('10% of 12,345 is 1,234.5: the half rounds up to 1,235', async () => {
    expect(await firstSale('pct10', 12_345)).toEqual({ answered: 1235, stored: 1235, fee: 247 });
  });

  it('10% of 12,344 is 1,234.4: rounds down to 1,234; 10% of 12,346 is 1,234.6: rounds up to 1,235', async () => {
    expect((await firstSale('pct10', 12_344)).stored).toBe(1234);
    expect((await firstSale('pct10', 12_346)).stored).toBe(1235);
  });

  it('12.3456% of 7,853 is 969.499968: just under a half rounds down to 969', async () => {
    expect(await firstSale('pct12_3456', 7_853)).toEqual({ answered: 969, stored: 969, fee: 194 });
  });

  it('4.35% of 3,000 is exactly 130.5 (a floating-point product gives 130.4999…): rounds up to 131', async () => {
    expect(await firstSale('pct4_35', 3_000)).toEqual({ answered: 131, stored: 131, fee: 26 });
  });

  it('in EUR and in VND (no minor unit) alike: 10% of 12,345 pays 1,235 of the sale currency’s smallest unit', async () => {
    expect(await firstSale('pct10', 12_345, 'EUR')).toEqual({ answered: 1235, stored: 1235, fee: 247 });
    expect(await firstSale('pct10', 12_345, 'VND')).toEqual({ answered: 1235, stored: 1235, fee: 247 });
  });

  it('recurring_percent rounds every sale: 12.5% of 1,004 (125.5) pays 126, then 12.5% of 1,012 (126.5) pays 127', async () => {
    const customerKey = await customer('rec12_5');
    expect(await sell('rec12_5', customerKey, 1_004)).toEqual({ answered: 126, stored: 126, fee: 25 });
    expect(await sell('rec12_5', customerKey, 1_012)).toEqual({ answered: 127, stored: 127, fee: 25 });
  });
});

describe(`[${dbKind}] 2.6 commission: fixed rate in major units of the sale currency, to the nearest minor unit, halves up`, () => {
  it('fixed 12.5 in VND (no minor unit) is 12.5 đồng: the half rounds up to 13', async () => {
    expect(await firstSale('fix12_5', 500_000, 'VND')).toEqual({ answered: 13, stored: 13, fee: 3 });
  });

  it('fixed 12.5 in USD is exactly 1,250 cents', async () => {
    expect(await firstSale('fix12_5', 500, 'USD')).toEqual({ answered: 1250, stored: 1250, fee: 250 });
  });

  it('fixed 12.4999 in VND is 12.4999 đồng: rounds down to 12; in USD and EUR 1,249.99 cents rounds up to 1,250', async () => {
    expect(await firstSale('fix12_4999', 500_000, 'VND')).toEqual({ answered: 12, stored: 12, fee: 2 });
    expect(await firstSale('fix12_4999', 500, 'USD')).toEqual({ answered: 1250, stored: 1250, fee: 250 });
    expect(await firstSale('fix12_4999', 500, 'EUR')).toEqual({ answered: 1250, stored: 1250, fee: 250 });
  });
});

describe(`[${dbKind}] platform fee: 20% of each commission, to the nearest minor unit`, () => {
  it('a fee of 247.6 (20% of a 1,238 commission) rounds up to 248', async () => {
    expect(await firstSale('pct10', 12_380)).toEqual({ answered: 1238, stored: 1238, fee: 248 });
  });

  it('a fee of 247.4 (20% of a 1,237 commission) rounds down to 247', async () => {
    expect(await firstSale('pct10', 12_370)).toEqual({ answered: 1237, stored: 1237, fee: 247 });
  });

  it('a fee of 2.6 đồng (20% of a 13 đồng commission) rounds up to 3; of 0.8 (a 4 đồng commission) up to 1; of 0.2 (1 đồng) down to 0', async () => {
    expect((await firstSale('fix12_5', 500_000, 'VND')).fee).toBe(3);
    expect(await firstSale('pct10', 40, 'VND')).toEqual({ answered: 4, stored: 4, fee: 1 });
    expect(await firstSale('pct10', 10, 'VND')).toEqual({ answered: 1, stored: 1, fee: 0 });
  });
});
