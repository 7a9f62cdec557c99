/** Display helpers: dates, money, counts. */
import { CURRENCY_MINOR_UNITS, type Currency } from '@reftrack/contract';

export function formatDateTime(iso: string | null | undefined, opts: { seconds?: boolean } = {}): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: opts.seconds ? '2-digit' : undefined });
}

export function formatMoney(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  const units = CURRENCY_MINOR_UNITS[code as Currency] ?? 100;
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: code }).format(minor / units);
  } catch {
    return `${(minor / units).toFixed(units === 1 ? 0 : 2)} ${code}`;
  }
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString()} ${n === 1 ? one : many}`;
}

/** `YYYY-MM-DD` of a date in UTC. */
export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return utcDay(d);
}

/** Whole days from `a` to `b` (both `YYYY-MM-DD`). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / 86_400_000);
}

export const COMMISSION_LABELS: Record<string, string> = {
  percent: 'Percent of the first sale',
  fixed: 'Fixed amount for the first sale',
  recurring_percent: 'Percent of every sale (recurring)',
  recurring_fixed: 'Fixed amount for every sale (recurring)',
};

export function describeCommission(type: string, rate: number): string {
  if (type === 'percent' || type === 'recurring_percent') return `${rate}% ${type === 'percent' ? 'of the first sale' : 'of every sale'}`;
  return `${rate} ${type === 'fixed' ? 'per first sale' : 'per sale'} (sale currency)`;
}

export const EVENT_TYPE_LABELS: Record<string, string> = { click: 'Click', lead: 'Lead', conversion: 'Sale' };
