import { BRAND, type ClickResponse, type LeadRequest, type LeadResponse } from '@reftrack/contract';
import { affOf, clickIdToStore } from './attribution.js';
import { clickBody } from './click.js';
import { readCookie } from './cookies.js';
import { domainCandidates, writeCookie } from './domain.js';
import { post, type Reply } from './http.js';
import { log, setDebug } from './log.js';
import { sessionId } from './session.js';

export interface Options {
  /**
   * The program this page belongs to (`data-reftrack-program-id` on the script tag). Not sent:
   * the referral link names the program of a click, and the click id that of a lead.
   */
  programId?: number | string;
  /** Origin of the Reftrack server. Default: the origin the script was served from (ESM build: the page's origin). */
  apiBase?: string;
  /** Cookie Domain attribute, e.g. `.example.com`; skips root-domain detection. */
  cookieDomain?: string;
  /** Log info and warn messages (errors always log). */
  debug?: boolean;
  /** Do nothing (no cookie, no request) until `consent()` is called. */
  requireConsent?: boolean;
}

export interface LeadInput {
  /** The advertiser's stable user id (`customer_key`). */
  customerKey: string;
  email?: string;
}

export interface TrackerError {
  code?: string;
  message: string;
  [extra: string]: unknown;
}

/** Status 0: nothing reached the server (`network_error`, `not_initialized`, `consent_required`, `no_click_id`). */
export interface LeadFailure {
  success: false;
  status: number;
  error: TrackerError;
}

export type LeadResult = LeadResponse | LeadFailure;

// Written out rather than read from the contract's ROUTES table, which would pull the whole table
// into the bundle; a unit test holds them equal to ROUTES.
export const CLICK_PATH = '/api/v1/track/click';
export const LEAD_PATH = '/api/v1/track/lead';

/** Defaults under the options passed to init(); the served script sets apiBase to its own origin. */
export const defaults: Options = {};

let opts: Options | undefined;
let consented = false;
// The URL last sent as a click, so that init() and a router's track() on the same URL count once.
let lastUrl = '';
// The click in flight: a lead right after landing must wait for its cookie.
let pending: Promise<unknown> | undefined;

const allowed = () => opts && (!opts.requireConsent || consented);

// apiBase is an origin; resolving against it tolerates a trailing slash.
const call = (path: string, body: unknown) => post(path, opts!.apiBase || location.href, body);

/** Logs a failed call and turns it into the documented failure shape. */
function failure(what: string, [status, body]: Reply, level: 'warn' | 'error' = 'error'): LeadFailure {
  const error = (body.error || { message: body.message }) as TrackerError;
  log(level, what, status, error);
  return { success: false, status, error };
}

export function getClickId(): string | null {
  return readCookie(document, BRAND.cookieName);
}

export function init(options: Options = {}): void {
  if (opts) return log('error', 'init twice');
  opts = { ...defaults, ...options };
  setDebug(!!opts.debug);
  log('info', 'init', opts);
  track();
}

/** The visitor agreed: from now on the tracker may write its cookie and call the server. */
export function consent(): void {
  consented = true;
  if (opts) track();
}

async function click(existing: string | null): Promise<void> {
  const reply = await call(CLICK_PATH, clickBody(sessionId(), existing));
  const b = reply[1] as Partial<ClickResponse>;
  if (reply[0] != 200) return void failure('click', reply);
  const id = clickIdToStore(existing, b.click_id);
  const { cookieDomain } = opts!;
  const domains = cookieDomain ? [cookieDomain] : domainCandidates(location.hostname);
  const secure = location.protocol == 'https:';
  if (id && writeCookie(document, domains, BRAND.cookieName, id, b.cookie_window_days! * 86400, secure) == null)
    return log('error', 'cookie refused');
  // Logs both outcomes: a new cookie, or the first click's id kept (first-click attribution).
  log('info', 'click', b, getClickId());
}

/**
 * Sends a click when the current URL carries `aff` and was not sent yet; call it on route changes
 * of a single-page app. Resolves with the click id held afterwards.
 */
export async function track(): Promise<string | null> {
  const href = location.href;
  if (allowed() && affOf(href) && href != lastUrl) {
    lastUrl = href;
    pending = click(getClickId());
  }
  await pending;
  return getClickId();
}

/**
 * Browser-mode lead: no API key, the click id carries attribution. Never rejects: resolves with
 * the server's body on 200 (`provisional: true` under a `server_required` program), else with a
 * `LeadFailure`.
 */
export async function trackLead(lead: LeadInput): Promise<LeadResult> {
  await pending;
  const clickId = getClickId();
  const skip = !opts ? 'not_initialized' : !allowed() ? 'consent_required' : clickId ? '' : 'no_click_id';
  // Expected situations (a visitor who came directly), not faults: warn, visible in debug mode only.
  if (skip) return failure('lead', [0, { error: { code: skip, message: skip } }], 'warn');
  const body: LeadRequest = { click_id: clickId!, customer_key: lead.customerKey, email: lead.email };
  const reply = await call(LEAD_PATH, body);
  if (reply[0] != 200) return failure('lead', reply);
  log('info', 'lead', reply[1]);
  return reply[1] as unknown as LeadResponse;
}
