/**
 * Partners' payout details (docs/commissions.md, "Payout details"): a PayPal e-mail, or the bank
 * details a Wise batch needs. They are read back to write payout files, so they are encrypted at
 * rest with the secret box (sealed as one JSON document, bound to its column), and the API shows
 * only a summary: the PayPal e-mail, or the account holder and the account's last four characters.
 */
import type { Knex } from 'knex';
import { ERRORS, INPUT_RULES, type PayoutDetailsInput, type PayoutDetailsView } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { SecretBox } from '../secrets/secret-box.js';
import type { Body } from './json-values.js';

export const PAYOUT_DETAILS_COLUMN = { table: 'partner_payout_details', column: 'details_sealed', purpose: 'partner_payout_details.details_sealed' } as const;

const { email: EMAIL, iban: IBAN, bic: BIC } = INPUT_RULES.payoutDetails;

const problem = (text: string): never => fail(ERRORS.payoutDetailsInvalid, { problem: text });

function text(body: Body, key: string, max: number, required: boolean): string | undefined {
  const value = body[key];
  if (value === undefined || value === null || value === '') {
    if (required) problem(`${key} is required`);
    return undefined;
  }
  // No control characters and no characters that would break a CSV cell or a spreadsheet formula.
  if (typeof value !== 'string' || value.length > max || /[\u0000-\u001f\u007f]/.test(value) || /^[=+\-@]/.test(value.trim())) problem(`${key} must be text of at most ${max} characters, not starting with = + - or @`);
  return (value as string).trim();
}

/** Checks untrusted input; bank identifiers are kept without spaces, upper-case. */
export function parsePayoutDetails(body: Body): PayoutDetailsInput {
  const method = body.method;
  if (method === 'paypal') {
    const email = text(body, 'paypal_email', INPUT_RULES.payoutDetails.emailMaxLength, true)!;
    if (!EMAIL.test(email)) problem('paypal_email must be an e-mail address');
    return { method, paypal_email: email };
  }
  if (method !== 'wise') return problem('method must be paypal or wise');
  const compact = (key: string, max: number) => text(body, key, max, false)?.replace(/\s+/g, '').toUpperCase();
  const holder = text(body, 'account_holder', INPUT_RULES.payoutDetails.accountHolderMaxLength, true)!;
  const email = text(body, 'email', INPUT_RULES.payoutDetails.emailMaxLength, true)!;
  if (!EMAIL.test(email)) problem('email must be an e-mail address');
  const receiverType = body.receiver_type ?? 'PRIVATE';
  if (receiverType !== 'PRIVATE' && receiverType !== 'BUSINESS') problem('receiver_type must be PRIVATE or BUSINESS');
  const iban = compact('iban', 42);
  const bic = compact('bic', 11);
  const accountNumber = compact('account_number', 34);
  const sortCode = compact('sort_code', 8)?.replace(/-/g, '');
  const abartn = compact('abartn', 9);
  const accountType = body.account_type;
  if (iban !== undefined && !IBAN.test(iban)) problem('iban must be an IBAN (country code, check digits, account)');
  if (bic !== undefined && !BIC.test(bic)) problem('bic must be a BIC of 8 or 11 characters');
  if (accountNumber !== undefined && !INPUT_RULES.payoutDetails.accountNumber.test(accountNumber)) problem('account_number must be 4 to 34 letters or digits');
  if (sortCode !== undefined && !INPUT_RULES.payoutDetails.sortCode.test(sortCode)) problem('sort_code must be 6 digits');
  if (abartn !== undefined && !INPUT_RULES.payoutDetails.abartn.test(abartn)) problem('abartn must be the 9-digit ACH routing number');
  if (accountType !== undefined && accountType !== 'CHECKING' && accountType !== 'SAVINGS') problem('account_type must be CHECKING or SAVINGS');
  if (iban === undefined && accountNumber === undefined) problem('Give iban, or account_number with sort_code (GBP) or abartn and account_type (USD)');
  return {
    method,
    account_holder: holder,
    email,
    receiver_type: receiverType as 'PRIVATE' | 'BUSINESS',
    ...(iban ? { iban } : {}),
    ...(bic ? { bic } : {}),
    ...(accountNumber ? { account_number: accountNumber } : {}),
    ...(sortCode ? { sort_code: sortCode } : {}),
    ...(abartn ? { abartn } : {}),
    ...(accountType ? { account_type: accountType as 'CHECKING' | 'SAVINGS' } : {}),
  };
}

function summaryOf(details: PayoutDetailsInput): string {
  if (details.method === 'paypal') return details.paypal_email;
  const account = details.iban ?? details.account_number ?? '';
  return `${details.account_holder}, account ending ${account.slice(-4)}`;
}

export async function savePayoutDetails(db: Knex, box: SecretBox, partnerId: number, details: PayoutDetailsInput, now: number): Promise<PayoutDetailsView> {
  const sealed = box.seal(JSON.stringify(details), PAYOUT_DETAILS_COLUMN.purpose);
  await db('partner_payout_details').insert({ partner_id: partnerId, method: details.method, details_sealed: sealed, updated_at: now }).onConflict('partner_id').merge();
  return { partner_id: partnerId, method: details.method, summary: summaryOf(details), updated_at: new Date(now).toISOString() };
}

/** Each partner's details, opened (for payout files); partners without details are absent. */
export async function readPayoutDetails(db: Knex, box: SecretBox, partnerIds: readonly number[]): Promise<Map<number, PayoutDetailsInput>> {
  const out = new Map<number, PayoutDetailsInput>();
  if (partnerIds.length === 0) return out;
  const rows = await db('partner_payout_details').whereIn('partner_id', [...partnerIds]).select('partner_id', 'details_sealed');
  for (const r of rows) out.set(Number(r.partner_id), JSON.parse(box.open(r.details_sealed, PAYOUT_DETAILS_COLUMN.purpose)) as PayoutDetailsInput);
  return out;
}

export async function viewPayoutDetails(db: Knex, box: SecretBox, partnerId: number): Promise<PayoutDetailsView | null> {
  const row = await db('partner_payout_details').where({ partner_id: partnerId }).first('updated_at');
  if (!row) return null;
  const details = (await readPayoutDetails(db, box, [partnerId])).get(partnerId)!;
  return { partner_id: partnerId, method: details.method, summary: summaryOf(details), updated_at: new Date(Number(row.updated_at)).toISOString() };
}
