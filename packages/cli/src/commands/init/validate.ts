/**
 * The server's rules for a new program (spec 4.7, 7.6), applied before the request so that a
 * mistake is reported at once, with the server's own words, and exits 2.
 */
import { COMMISSION_TYPES, ERRORS, formatMessage, type CliInitRequest, type CommissionType } from '@reftrack/contract';
import { usageError } from '../../cli-error.js';

export interface InitInput {
  name?: string;
  domain?: string;
  commissionType?: string;
  commissionRate?: string;
  advertiserId?: string;
}

export const INIT_FIELDS = [
  { key: 'name', field: 'name', flag: '--name' },
  { key: 'domain', field: 'domain', flag: '--domain' },
  { key: 'commissionType', field: 'commission_type', flag: '--commission-type' },
  { key: 'commissionRate', field: 'commission_rate', flag: '--commission-rate' },
] as const;

export type RequiredKey = (typeof INIT_FIELDS)[number]['key'];

const blank = (value: string | undefined): boolean => value === undefined || value.trim() === '';

export function missingKeys(input: InitInput): RequiredKey[] {
  return INIT_FIELDS.filter((f) => blank(input[f.key])).map((f) => f.key);
}

/** Each returns null when the value is fine, else the message the server would answer. */
export function checkCommissionType(value: string): string | null {
  return (COMMISSION_TYPES as readonly string[]).includes(value.trim()) ? null : formatMessage(ERRORS.cliInitCommissionType.message, { value: value.trim() });
}

/** A plain decimal only: "20", "7.5". Number() would also take "0x14", "1e3" or "" and hide a typo. */
export function parseCommissionRate(value: string): number | null {
  const s = value.trim();
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : null;
}

export function checkCommissionRate(value: string): string | null {
  return parseCommissionRate(value) === null ? ERRORS.cliInitCommissionRate.message : null;
}

export function parseAdvertiserId(value: string): number {
  const s = value.trim();
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n) || n < 1) {
    throw usageError(`--advertiser-id must be a positive integer, got "${value}".`, 'Leave it out to use the workspace of the account you are logged in with.');
  }
  return n;
}

/** Values that were given must be valid, whether or not the others still have to be asked for. */
export function checkGiven(input: InitInput): void {
  if (!blank(input.commissionType)) {
    const problem = checkCommissionType(input.commissionType!);
    if (problem) throw usageError(problem, `Use --commission-type ${COMMISSION_TYPES.join('|')}.`);
  }
  if (!blank(input.commissionRate) && parseCommissionRate(input.commissionRate!) === null) {
    throw usageError(ERRORS.cliInitCommissionRate.message, 'Use a plain number, e.g. --commission-rate 20 (percent types) or 15 (fixed amount).');
  }
  if (input.advertiserId !== undefined) parseAdvertiserId(input.advertiserId);
}

export function checkComplete(input: InitInput): void {
  const missing = missingKeys(input);
  if (missing.length === 0) return;
  const flags = INIT_FIELDS.filter((f) => missing.includes(f.key)).map((f) => f.flag);
  throw usageError(ERRORS.cliInitMissingFields.message, `Pass ${flags.join(', ')} (prompts appear only when stdin is a terminal).`);
}

/** Complete input to request body, or a usage error carrying the server's message (checked in the server's order). */
export function validateInit(input: InitInput): CliInitRequest {
  checkComplete(input);
  checkGiven(input);
  const body: CliInitRequest = {
    name: input.name!.trim(),
    domain: input.domain!.trim(),
    commission_type: input.commissionType!.trim() as CommissionType,
    commission_rate: parseCommissionRate(input.commissionRate!)!,
  };
  if (input.advertiserId !== undefined) body.advertiser_id = parseAdvertiserId(input.advertiserId);
  return body;
}
