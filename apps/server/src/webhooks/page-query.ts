/** `page` and `pageSize` of the delivery log (the event listing's rules and messages). */
import { ERRORS, LIMITS, type ErrorSpec } from '@reftrack/contract';
import { fail } from '../api-error.js';

function positive(value: unknown, fallback: number, max: number, error: ErrorSpec): number {
  if (value === undefined) return fallback;
  const s = String(value);
  if (!/^\d{1,6}$/.test(s) || Number(s) < 1 || Number(s) > max) fail(error);
  return Number(s);
}

export function pageQuery(query: Record<string, unknown>): { page: number; pageSize: number } {
  return {
    page: positive(query.page, 1, 100_000, ERRORS.eventsPageInvalid),
    pageSize: positive(query.pageSize, 25, LIMITS.eventListingMaxPageSize, ERRORS.eventsPageSizeInvalid),
  };
}
