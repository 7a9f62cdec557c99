/**
 * The commission ledger's query parameters (dashboard and agent API, docs/commissions.md):
 * `partner_id`, `status`, `currency`, `from`, `to` (ISO 8601, on the commission's creation),
 * `cursor` (the previous page's `next_cursor`) and `limit`; and its CSV export.
 */
import { COMMISSION_STATUSES, CURRENCIES, ERRORS, LIMITS, type CommissionStatus, type Currency, type LedgerCommission } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { LedgerFilter } from '../db/commission-ledger.js';

type Query = Record<string, string | string[] | undefined>;

const one = (query: Query, key: string): string | undefined => {
  const v = query[key];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

function time(value: string | undefined, error: typeof ERRORS.commissionFromInvalid): number | undefined {
  if (value === undefined || value === '') return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) fail(error);
  return ms;
}

export function parseCurrency(value: unknown): Currency {
  const upper = typeof value === 'string' ? value.toUpperCase() : '';
  if (!(CURRENCIES as readonly string[]).includes(upper)) fail(ERRORS.commissionCurrencyInvalid);
  return upper as Currency;
}

export function parseLedgerQuery(programId: number, query: Query): { filter: LedgerFilter; limit: number } {
  const filter: LedgerFilter = { programId };
  const partner = one(query, 'partner_id');
  if (partner !== undefined) {
    if (!/^\d{1,15}$/.test(partner) || Number(partner) < 1) fail(ERRORS.commissionPartnerInvalid);
    filter.partnerId = Number(partner);
  }
  const status = one(query, 'status');
  if (status !== undefined) {
    if (!(COMMISSION_STATUSES as readonly string[]).includes(status)) fail(ERRORS.commissionStatusInvalid);
    filter.status = status as CommissionStatus;
  }
  const currency = one(query, 'currency');
  if (currency !== undefined) filter.currency = parseCurrency(currency);
  filter.from = time(one(query, 'from'), ERRORS.commissionFromInvalid);
  filter.to = time(one(query, 'to'), ERRORS.commissionToInvalid);
  if (filter.from !== undefined && filter.to !== undefined && filter.from > filter.to) fail(ERRORS.commissionRangeInvalid);
  const cursor = one(query, 'cursor');
  if (cursor !== undefined) {
    if (!/^\d{1,15}$/.test(cursor) || Number(cursor) < 1) fail(ERRORS.commissionCursorInvalid);
    filter.beforeId = Number(cursor);
  }
  const limitText = one(query, 'limit');
  let limit = 50;
  if (limitText !== undefined) {
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > LIMITS.commissionListMaxPageSize) fail(ERRORS.commissionLimitInvalid);
    limit = Number(limitText);
  }
  return { filter, limit };
}

export const LEDGER_CSV_COLUMNS = [
  'commission_id', 'created_at', 'status', 'status_reason', 'partner_id', 'partner_code', 'partner_name', 'transaction_id', 'customer_key',
  'currency', 'amount_minor', 'adjustments_minor', 'sale_amount_minor', 'refunded_minor', 'hold_until', 'payout_id',
  // Appended (columns are only ever added at the end): why it was held for review, space-separated.
  'review_reasons',
] as const;

/** A spreadsheet would run a cell starting with = + - @ as a formula: such text gets a leading quote. */
function cell(value: string | number | null): string {
  let s = value === null ? '' : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Amounts stay in minor units, as integers, with the currency in its own column. */
export function ledgerCsvRows(rows: readonly LedgerCommission[]): string {
  return rows
    .map((r) =>
      [
        r.id, r.created_at, r.status, r.status_reason, r.partner.id, r.partner.code, r.partner.name, r.transaction_id, r.customer_key,
        r.currency, r.amount_cents, r.adjustments_cents, r.sale_amount_cents, r.refunded_amount_cents, r.hold_until, r.payout_id, r.review_reasons.join(' '),
      ]
        .map(cell)
        .join(',') + '\r\n',
    )
    .join('');
}
