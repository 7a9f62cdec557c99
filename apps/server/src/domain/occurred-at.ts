/** `occurred_at` of the sale call: ISO 8601 with an offset, a real date, within the last 30 days, at most 5 minutes ahead. */
import { LIMITS } from '@reftrack/contract';

const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The instant in epoch ms, or undefined when the value breaks any rule. */
export function parseOccurredAt(value: unknown, now: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = ISO_WITH_OFFSET.exec(value);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return undefined;
  const at = Date.parse(value.length > 0 && m[7] && m[7].length === 5 ? value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : value);
  if (Number.isNaN(at)) return undefined;
  if (at < now - LIMITS.occurredAtMaxAgeDays * 86_400_000) return undefined;
  if (at > now + LIMITS.occurredAtMaxFutureSeconds * 1000) return undefined;
  return at;
}
