/**
 * The dimensions of a click kept in the rollups (docs/analytics.md): country, device, browser,
 * referrer domain and the UTM parameters of the page the visitor landed on. Computed from the
 * click's row by the click batch, and from the attributed click by a lead, sale or refund, so a
 * conversion is counted under the dimensions of the click that brought it.
 */
import { STATS_DIMENSIONS, STATS_LIMITS } from '@reftrack/contract';

export interface ClickFacts {
  page_url: string | null;
  referrer_url: string | null;
  geo_country: string | null;
  device_type: string | null;
  browser_name: string | null;
}

const MAX = STATS_LIMITS.dimensionValueMaxLength;
const cut = (value: string | null | undefined): string => (value ? value.slice(0, MAX) : '');

/** The host of a URL, lower-case and without a leading `www.`; '' when there is none. */
function domainOf(url: string | null): string {
  if (!url) return '';
  try {
    const host = new URL(url).hostname.toLowerCase();
    return cut(host.startsWith('www.') ? host.slice(4) : host);
  } catch {
    return '';
  }
}

type Utm = readonly [source: string, medium: string, campaign: string];
const NO_UTM: Utm = ['', '', ''];

function utmOf(url: string | null): Utm {
  // Most landing pages carry no UTM parameters: no URL is parsed for them.
  if (!url || !url.includes('utm_')) return NO_UTM;
  try {
    const params = new URL(url).searchParams;
    return [cut(params.get('utm_source')), cut(params.get('utm_medium')), cut(params.get('utm_campaign'))];
  } catch {
    return NO_UTM;
  }
}

/** One string per dimension of the contract: a dimension added there fails to compile below. */
type StringPer<T extends readonly unknown[]> = { -readonly [K in keyof T]: string };
type Dimensions = StringPer<typeof STATS_DIMENSIONS>;

/**
 * The click's value of each dimension, in STATS_DIMENSIONS order; '' where unknown. Called per
 * click on the click lane: one array, no spread.
 */
export function clickDimensions(click: ClickFacts): string[] {
  const utm = utmOf(click.page_url);
  const values: Dimensions = [cut(click.geo_country), cut(click.device_type), cut(click.browser_name), domainOf(click.referrer_url), utm[0], utm[1], utm[2]];
  return values;
}
