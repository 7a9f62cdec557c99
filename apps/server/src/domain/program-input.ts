/** Program fields from untrusted input, with the CLI's validation rules and messages (7.6). */
import { COMMISSION_TYPES, ERRORS, INPUT_RULES, LEAD_AUTH_MODES, LIMITS, type CommissionType, type LeadAuth } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { Body } from './json-values.js';
import type { NewProgram } from '../db/programs.js';

const HOST = /^(?=.{1,253}$)(localhost|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})$/;

function domainOf(value: unknown): string {
  if (typeof value !== 'string') fail(ERRORS.programDomainInvalid);
  // People paste URLs; keep only the host.
  const host = value.trim().toLowerCase().replace(/^https?:\/\//, '').replace(/[/?#].*$/, '').replace(/:\d+$/, '');
  if (!HOST.test(host)) fail(ERRORS.programDomainInvalid);
  return host;
}

function nameOf(value: unknown): string {
  if (typeof value !== 'string' || !value.trim() || value.trim().length > INPUT_RULES.programNameMaxLength) fail(ERRORS.programNameInvalid);
  return value.trim();
}

function commissionTypeOf(value: unknown): CommissionType {
  if (typeof value !== 'string' || !(COMMISSION_TYPES as readonly string[]).includes(value)) fail(ERRORS.cliInitCommissionType, { value: String(value) });
  return value as CommissionType;
}

function rateOf(value: unknown): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0 || n > LIMITS.fixedCommissionRateMax) fail(ERRORS.cliInitCommissionRate);
  return n;
}

/**
 * A percent rate above LIMITS.percentCommissionRateMax (ten times the sale) is refused, so every
 * commission of every allowed sale amount is an exact integer (domain/commission.ts). Checked on
 * the combination, since an update may change the type or the rate alone.
 */
export function checkTerms(type: CommissionType, rate: number): void {
  if ((type === 'percent' || type === 'recurring_percent') && rate > LIMITS.percentCommissionRateMax) fail(ERRORS.percentRateTooHigh);
}

function windowOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > INPUT_RULES.attributionWindowDaysMax) fail(ERRORS.attributionWindowInvalid);
  return value;
}

function holdDaysOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > LIMITS.commissionHoldDaysMax) fail(ERRORS.commissionHoldDaysInvalid);
  return value;
}

function payoutMinimumOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > LIMITS.payoutMinimumMax) fail(ERRORS.payoutMinimumInvalid);
  return value;
}

function leadAuthOf(value: unknown): LeadAuth {
  if (typeof value !== 'string' || !(LEAD_AUTH_MODES as readonly string[]).includes(value)) fail(ERRORS.leadAuthInvalid);
  return value as LeadAuth;
}

const missing = (v: unknown) => v === undefined || v === null || v === '';

export function parseNewProgram(body: Body): NewProgram {
  if (['name', 'domain', 'commission_type', 'commission_rate'].some((k) => missing(body[k]))) fail(ERRORS.cliInitMissingFields);
  const type = commissionTypeOf(body.commission_type);
  const rate = rateOf(body.commission_rate);
  checkTerms(type, rate);
  return {
    name: nameOf(body.name),
    domain: domainOf(body.domain),
    commission_type: type,
    commission_rate: rate,
    attribution_window_days: missing(body.attribution_window_days) ? undefined : windowOf(body.attribution_window_days),
    lead_auth: missing(body.lead_auth) ? undefined : leadAuthOf(body.lead_auth),
    commission_hold_days: missing(body.commission_hold_days) ? undefined : holdDaysOf(body.commission_hold_days),
    payout_minimum: missing(body.payout_minimum) ? undefined : payoutMinimumOf(body.payout_minimum),
  };
}

/** Only the fields present are changed. */
export function parseProgramUpdate(body: Body): Partial<NewProgram> {
  const update: Partial<NewProgram> = {};
  if (body.name !== undefined) update.name = nameOf(body.name);
  if (body.domain !== undefined) update.domain = domainOf(body.domain);
  if (body.commission_type !== undefined) update.commission_type = commissionTypeOf(body.commission_type);
  if (body.commission_rate !== undefined) update.commission_rate = rateOf(body.commission_rate);
  if (body.attribution_window_days !== undefined) update.attribution_window_days = windowOf(body.attribution_window_days);
  if (body.lead_auth !== undefined) update.lead_auth = leadAuthOf(body.lead_auth);
  if (body.commission_hold_days !== undefined) update.commission_hold_days = holdDaysOf(body.commission_hold_days);
  if (body.payout_minimum !== undefined) update.payout_minimum = payoutMinimumOf(body.payout_minimum);
  if (Object.keys(update).length === 0) fail(ERRORS.noFieldsToUpdate);
  return update;
}
