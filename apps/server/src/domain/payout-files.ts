/**
 * Payout files a batch exports for the payment services that pay partners (docs/commissions.md,
 * "Payout files"), written from their public documentation:
 *
 * - PayPal Payouts Web (developer.paypal.com, "Send payouts from Payouts Web"): no header row; per
 *   row the recipient's PayPal e-mail, the amount in the currency's format ("12.34"), the currency,
 *   an optional customer id (at most 30 characters, no spaces), a note to the recipient, and the
 *   wallet ("PayPal"). One currency per file and at most 5,000 rows: a larger batch is split into
 *   parts.
 * - Wise batch payments (wise.com help, "How do I fill in my batch template?"): a header row of
 *   Wise's column names, then per row the account holder, e-mail, payment reference, receiver type,
 *   `amountCurrency` (`target`: the partner receives exactly the amount, fees are the sender's),
 *   amount, source and target currency and the bank details (IBAN/BIC, or account number with
 *   sort code or ACH routing number). At most 1,000 rows per file.
 *
 * Cells are quoted when they hold a comma, a quote or a line break (RFC 4180).
 */
import { LIMITS, type Currency, type PayoutDetailsInput, type PayoutFileFormat, type PayoutObject } from '@reftrack/contract';
import { majorUnits } from './payouts.js';

export const WISE_COLUMNS = ['name', 'recipientEmail', 'paymentReference', 'receiverType', 'amountCurrency', 'amount', 'sourceCurrency', 'targetCurrency', 'IBAN', 'BIC', 'accountNumber', 'sortCode', 'abartn', 'accountType'] as const;

export const ROWS_PER_FILE: Record<PayoutFileFormat, number> = { paypal: LIMITS.paypalPayoutRowsPerFile, wise: LIMITS.wiseBatchRowsPerFile };

function cell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const line = (cells: readonly string[]): string => cells.map(cell).join(',') + '\r\n';

/** PayPal's customer id: at most 30 characters, no spaces. */
const paypalCustomerId = (reference: string): string => reference.replace(/\s+/g, '').slice(0, 30);

export interface PayoutFileRow {
  payout: PayoutObject;
  details: PayoutDetailsInput;
}

/** One file of `format` for payouts of one currency (the caller splits into ROWS_PER_FILE parts). */
export function payoutFile(format: PayoutFileFormat, currency: Currency, rows: readonly PayoutFileRow[], programName: string): string {
  if (format === 'paypal') {
    return rows
      .map(({ payout, details }) => {
        if (details.method !== 'paypal') throw new Error('payout details are not PayPal details');
        return line([details.paypal_email, majorUnits(payout.amount_cents, currency), currency, paypalCustomerId(payout.reference), `${programName} commissions, payout ${payout.reference}`.slice(0, 4000), 'PayPal']);
      })
      .join('');
  }
  let out = line(WISE_COLUMNS);
  for (const { payout, details } of rows) {
    if (details.method !== 'wise') throw new Error('payout details are not Wise details');
    out += line([
      details.account_holder,
      details.email,
      // Wise passes the reference to the recipient's bank, which may keep only a short one.
      payout.reference.slice(0, 18),
      details.receiver_type ?? 'PRIVATE',
      'target',
      majorUnits(payout.amount_cents, currency),
      currency,
      currency,
      details.iban ?? '',
      details.bic ?? '',
      details.account_number ?? '',
      details.sort_code ?? '',
      details.abartn ?? '',
      details.account_type ?? '',
    ]);
  }
  return out;
}

/**
 * Each payout's own row of the payout file its method uses (the partner portal shows it, so a
 * partner can check what the program will upload), with the partner's current details. None for a
 * manual payout, or when the details are missing or of another method.
 */
export function payoutCsvLines(payouts: readonly PayoutObject[], details: PayoutDetailsInput | undefined, programNames: ReadonlyMap<number, string>): Map<number, string> {
  const lines = new Map<number, string>();
  for (const payout of payouts) {
    if (!details || (payout.method !== 'paypal' && payout.method !== 'wise') || details.method !== payout.method) continue;
    const file = payoutFile(payout.method, payout.currency, [{ payout, details }], programNames.get(payout.program_id) ?? '');
    // A Wise file starts with its header row; the payout's row is the last line.
    const rows = file.split('\r\n').filter((l) => l.length > 0);
    lines.set(payout.id, rows[rows.length - 1]!);
  }
  return lines;
}
