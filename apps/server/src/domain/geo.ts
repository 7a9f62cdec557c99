/**
 * Geo data for a click: from a trusted edge's headers when TRUST_PROXY is on, else from an optional
 * local MaxMind database (GEOIP_DATABASE). Nothing is downloaded at run time.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { CityResponse, Reader } from 'maxmind';

export interface GeoInfo {
  geo_country: string | null;
  geo_region: string | null;
  geo_city: string | null;
}

const EMPTY: GeoInfo = { geo_country: null, geo_region: null, geo_city: null };

function header(headers: IncomingHttpHeaders, ...names: string[]): string | null {
  for (const name of names) {
    const v = headers[name];
    const value = Array.isArray(v) ? v[0] : v;
    if (value && value !== 'XX') {
      try {
        return decodeURIComponent(value).slice(0, 100);
      } catch {
        return value.slice(0, 100);
      }
    }
  }
  return null;
}

/** Country, region and city headers set by Cloudflare, Vercel, CloudFront and Fastly-style edges. */
export function geoFromEdgeHeaders(headers: IncomingHttpHeaders): GeoInfo {
  const country = header(headers, 'cf-ipcountry', 'x-vercel-ip-country', 'cloudfront-viewer-country', 'x-country-code', 'x-geo-country');
  if (!country) return EMPTY;
  return {
    geo_country: /^[A-Za-z]{2}$/.test(country) ? country.toUpperCase() : null,
    geo_region: header(headers, 'cf-region-code', 'x-vercel-ip-country-region', 'cloudfront-viewer-country-region', 'x-geo-region'),
    geo_city: header(headers, 'cf-ipcity', 'x-vercel-ip-city', 'cloudfront-viewer-city', 'x-geo-city'),
  };
}

export interface GeoLookup {
  lookup(ip: string, headers: IncomingHttpHeaders): GeoInfo;
}

export async function createGeoLookup(options: { trustProxy: boolean; maxmindFile?: string }): Promise<GeoLookup> {
  let reader: Reader<CityResponse> | undefined;
  if (options.maxmindFile) {
    const maxmind = await import('maxmind');
    reader = await maxmind.open<CityResponse>(options.maxmindFile);
  }
  return {
    lookup(ip, headers) {
      if (options.trustProxy) {
        const fromEdge = geoFromEdgeHeaders(headers);
        if (fromEdge.geo_country) return fromEdge;
      }
      if (!reader) return EMPTY;
      const hit = reader.get(ip.replace(/^::ffff:/, ''));
      if (!hit) return EMPTY;
      return {
        geo_country: hit.country?.iso_code ?? null,
        geo_region: hit.subdivisions?.[0]?.iso_code ?? null,
        geo_city: hit.city?.names?.en ?? null,
      };
    },
  };
}
