/**
 * Commission and platform-fee math (decisions in docs/decisions.md):
 * percent types pay `rate`% of the sale; fixed types pay `rate` major units of the sale's currency;
 * non-recurring types pay a customer's first sale only, recurring types every sale. Amounts are
 * rounded to the nearest minor unit, halves up.
 *
 * The arithmetic is exact: a rate has at most four decimals (the column is decimal(14,4)), so it is
 * counted in ten-thousandths and multiplied as integers (BigInt), where a floating-point product
 * such as 1,000,000,000,000 × 12.3456 would already have lost units. With the bounds of
 * `LIMITS` (amount ≤ 10^12, percent rate ≤ 1000) every result is an exact JavaScript integer.
 */
import { CURRENCY_MINOR_UNITS, type CommissionType, type Currency } from '@reftrack/contract';

/** The platform's fee on each commission, in basis points of the commission amount. */
export const PLATFORM_FEE_BPS = 2000;

const RATE_SCALE = 10_000n;

export function isRecurringType(type: CommissionType): boolean {
  return type === 'recurring_percent' || type === 'recurring_fixed';
}

export function paysThisSale(type: CommissionType, customerHasConverted: boolean): boolean {
  return isRecurringType(type) || !customerHasConverted;
}

/** numerator / denominator rounded to the nearest integer, halves up (both non-negative). */
function divideRounded(numerator: bigint, denominator: bigint): number {
  const quotient = numerator / denominator;
  const rounded = (numerator % denominator) * 2n >= denominator ? quotient + 1n : quotient;
  const value = Number(rounded);
  // Unreachable within LIMITS; a program stored before those bounds must fail, never round.
  if (!Number.isSafeInteger(value)) throw new RangeError('commission amount beyond the exact integer range');
  return value;
}

/** A rate in ten-thousandths of a unit (four decimals, as stored). */
const rateUnits = (rate: number): bigint => BigInt(Math.round(rate * Number(RATE_SCALE)));

export function commissionAmount(type: CommissionType, rate: number, saleAmountMinor: number, currency: Currency): number {
  if (type === 'percent' || type === 'recurring_percent') return divideRounded(BigInt(saleAmountMinor) * rateUnits(rate), 100n * RATE_SCALE);
  return divideRounded(rateUnits(rate) * BigInt(CURRENCY_MINOR_UNITS[currency]), RATE_SCALE);
}

export function platformFee(commissionMinor: number): number {
  return divideRounded(BigInt(commissionMinor) * BigInt(PLATFORM_FEE_BPS), 10_000n);
}
