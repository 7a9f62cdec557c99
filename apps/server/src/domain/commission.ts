/**
 * Commission and platform-fee math (decisions in docs/decisions.md):
 * percent types pay `rate`% of the sale; fixed types pay `rate` major units of the sale's currency;
 * non-recurring types pay a customer's first sale only, recurring types every sale.
 */
import { CURRENCY_MINOR_UNITS, type CommissionType, type Currency } from '@reftrack/contract';

/** The platform's fee on each commission, in basis points of the commission amount. */
export const PLATFORM_FEE_BPS = 2000;

export function isRecurringType(type: CommissionType): boolean {
  return type === 'recurring_percent' || type === 'recurring_fixed';
}

export function paysThisSale(type: CommissionType, customerHasConverted: boolean): boolean {
  return isRecurringType(type) || !customerHasConverted;
}

export function commissionAmount(type: CommissionType, rate: number, saleAmountMinor: number, currency: Currency): number {
  if (type === 'percent' || type === 'recurring_percent') return Math.round((saleAmountMinor * rate) / 100);
  return Math.round(rate * CURRENCY_MINOR_UNITS[currency]);
}

export function platformFee(commissionMinor: number): number {
  return Math.round((commissionMinor * PLATFORM_FEE_BPS) / 10_000);
}
