/** The 4.6 query string, validated into a typed value. */
import { ERRORS, EVENT_TYPES, LIMITS, type EventType } from '@reftrack/contract';
import { fail } from '../../api-error.js';

export interface EventsQuery {
  page: number;
  pageSize: number;
  types: EventType[];
  from?: number;
  to?: number;
  /**
   * Ours (additive): which clicks of known bots to list. `include` (the default) lists every
   * recorded click, as 4.6 does; `exclude` hides them; `only` shows just them (docs/analytics.md).
   */
  bots: 'include' | 'exclude' | 'only';
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Bounds are inclusive; a date-only `dateTo` covers that whole day (UTC). A time without offset is UTC. */
function parseBound(value: string, end: boolean): number | undefined {
  if (DATE_ONLY.test(value)) {
    const start = Date.parse(`${value}T00:00:00Z`);
    if (Number.isNaN(start) || new Date(start).toISOString().slice(0, 10) !== value) return undefined;
    return end ? start + 86_400_000 - 1 : start;
  }
  if (!DATE_TIME.test(value)) return undefined;
  const withZone = /(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : `${value}Z`;
  const t = Date.parse(withZone);
  return Number.isNaN(t) ? undefined : t;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function positiveInt(value: string | undefined, fallback: number, max: number, error: (typeof ERRORS)[keyof typeof ERRORS]): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,9}$/.test(value)) fail(error);
  const n = Number(value);
  if (n < 1 || n > max) fail(error);
  return n;
}

export function parseEventsQuery(query: Record<string, string | string[] | undefined>): EventsQuery {
  const page = positiveInt(single(query.page), 1, 1_000_000, ERRORS.eventsPageInvalid);
  const pageSize = positiveInt(single(query.pageSize), LIMITS.eventListingDefaultPageSize, LIMITS.eventListingMaxPageSize, ERRORS.eventsPageSizeInvalid);
  const type = single(query.eventType);
  let types: EventType[] = [...EVENT_TYPES];
  if (type !== undefined && type !== '' && type !== 'all') {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) fail(ERRORS.eventsTypeInvalid);
    types = [type as EventType];
  }
  const rawFrom = single(query.dateFrom);
  const rawTo = single(query.dateTo);
  const from = rawFrom ? parseBound(rawFrom, false) : undefined;
  if (rawFrom && from === undefined) fail(ERRORS.eventsDateFromInvalid);
  const to = rawTo ? parseBound(rawTo, true) : undefined;
  if (rawTo && to === undefined) fail(ERRORS.eventsDateToInvalid);
  if (from !== undefined && to !== undefined && from > to) fail(ERRORS.eventsDateRange);
  const bots = single(query.bots) || 'include';
  if (bots !== 'include' && bots !== 'exclude' && bots !== 'only') fail(ERRORS.eventsBotsInvalid);
  return { page, pageSize, types, from, to, bots };
}
