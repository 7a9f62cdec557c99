import { BRAND } from '@reftrack/contract';
import type { Options } from './tracker.js';

/** Options plus the script tag's own switch `data-reftrack-manual`. */
export type ScriptOptions = Options & { manual?: boolean };

/**
 * Every option can be written on the script tag: `data-reftrack-cookie-domain` arrives in
 * `dataset` as `reftrackCookieDomain` and becomes `cookieDomain`. An attribute without a value
 * (`data-reftrack-debug`) means true. One rule for all options costs fewer bytes than a line each.
 */
export function scriptOptions(dataset: Record<string, string | undefined>): ScriptOptions {
  const o: Record<string, unknown> = {};
  const re = RegExp('^' + BRAND.token + '(.)(.*)');
  for (const k in dataset) {
    const m = k.match(re);
    if (m) o[m[1].toLowerCase() + m[2]] = dataset[k] || true;
  }
  return o;
}
