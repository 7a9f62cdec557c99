/**
 * Type-level rules of the public API, checked by vitest's typecheck (tsc) on every test run: a
 * wrong type here fails `pnpm test`, not only `pnpm typecheck`.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { Reftrack, TrackSaleResult } from '../src/index.js';

describe('trackSale result', () => {
  it('a duplicate names the recorded sale: saleId is a number, never null (4.3 rule 3)', () => {
    type Duplicate = Extract<TrackSaleResult, { duplicate: true }>;
    expectTypeOf<Duplicate['saleId']>().toEqualTypeOf<number>();
    expectTypeOf<Duplicate['transactionId']>().toEqualTypeOf<string>();
  });

  it('a recorded sale carries the server data', () => {
    type Recorded = Extract<TrackSaleResult, { duplicate: false }>;
    expectTypeOf<Awaited<ReturnType<Reftrack['trackSale']>>>().toEqualTypeOf<TrackSaleResult>();
    expectTypeOf<Recorded>().toHaveProperty('data');
  });
});
