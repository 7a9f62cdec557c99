/**
 * Spec 4.1 and the click rows of 3.1 and 3.3: resolving a referral link and recording a click.
 * The hot path: reads cached, writes group-committed by the click batch, which also writes the
 * batch's `clicks.recorded` events. Called by the click route and the synthetic chains.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { insertId } from '../db/insert-id.js';
import { ERRORS, INPUT_RULES, type ClickResponse, type TestClickResponse } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { str, text } from './json-values.js';
import type { AppDeps } from '../deps.js';
import { newClickId } from './ids.js';
import { parseUserAgent } from './user-agent.js';
import { clickDimensions, type ClickFacts } from './click-dimensions.js';
import { findProgramKey } from '../auth/program-key.js';
import type { ResolvedLink } from '../db/link-cache.js';
import { CLICK_EVENT_COLUMNS, CUSTOMER_COLUMNS, rowObject, type Row } from '../db/click-rows.js';

const KEPT = INPUT_RULES.storedText;
/** Any printable value may name a (legacy) link; control characters, NUL included, never do. */
const SHORT_LINK = /^[^\u0000-\u001f\u007f]{1,200}$/;
const CLICK_ID = /^[A-Za-z0-9_]{1,64}$/;

export type ClickLink = ResolvedLink & { partnerId: number; programId: number; partnerCode: string };

/** What the click derives from the HTTP request besides the body (geo, user agent). */
export interface ClickOrigin {
  ip: string;
  headers: IncomingHttpHeaders;
}

/** Rule 1: the `aff` value of `affiliate_url`, resolved to an active, complete referral link. */
export async function resolveLink(deps: AppDeps, affiliateUrl: unknown): Promise<ClickLink> {
  if (affiliateUrl === undefined || affiliateUrl === null || affiliateUrl === '') fail(ERRORS.clickAffiliateUrlRequired);
  let url: URL;
  try {
    if (typeof affiliateUrl !== 'string') throw new TypeError('not a string');
    url = new URL(affiliateUrl);
  } catch {
    fail(ERRORS.clickInvalidAffiliateUrl);
  }
  const aff = url.searchParams.get('aff')?.trim();
  if (!aff) fail(ERRORS.clickNoAffParam);
  const link = SHORT_LINK.test(aff) ? await deps.links.get(aff) : null;
  if (!link) fail(ERRORS.clickLinkNotFound);
  if (link.partnerId === null || link.programId === null || link.partnerCode === null) fail(ERRORS.clickInvalidLinkConfig);
  if (!link.active) fail(ERRORS.clickLinkDisabled);
  return link as ClickLink;
}

/** The user agent of a click: the body's field, else the HTTP header (4.1). */
function userAgentOf(origin: ClickOrigin, body: Record<string, unknown>): string | null {
  const header = origin.headers['user-agent'];
  return text(body.user_agent, KEPT.user_agent) ?? (typeof header === 'string' && header ? header : null);
}

/** The click event's values, in the order of CLICK_EVENT_COLUMNS. */
function clickEventRow(origin: ClickOrigin, deps: AppDeps, body: Record<string, unknown>, link: { id: number; partnerId: number }, programId: number, clickId: string, test: boolean, now: number, userAgent = userAgentOf(origin, body)): Row {
  const geo = deps.geo.lookup(origin.ip, origin.headers);
  const device = parseUserAgent(userAgent ?? undefined);
  return [
    programId,
    link.id,
    link.partnerId,
    clickId,
    test,
    text(body.session_id, KEPT.session_id),
    text(body.page_url, KEPT.page_url),
    text(body.page_title, KEPT.page_title),
    text(body.referrer_url, KEPT.referrer_url),
    text(body.screen_resolution, KEPT.screen_resolution),
    text(body.viewport_size, KEPT.viewport_size),
    text(body.language, KEPT.language),
    text(body.timezone, KEPT.timezone),
    userAgent,
    geo.geo_country,
    geo.geo_region,
    geo.geo_city,
    device.device_type,
    device.device_os,
    device.browser_name,
    now,
    now,
    device.is_bot,
  ];
}

/** The click's facts its rollup dimensions come from, read off its row. */
function clickFacts(event: Row): ClickFacts {
  const at = (column: keyof typeof EVENT_COLUMN) => event[EVENT_COLUMN[column]] as string | null;
  return { page_url: at('page_url'), referrer_url: at('referrer_url'), geo_country: at('geo_country'), device_type: at('device_type'), browser_name: at('browser_name') };
}

const EVENT_COLUMN = Object.fromEntries(CLICK_EVENT_COLUMNS.map((c, i) => [c, i])) as Record<(typeof CLICK_EVENT_COLUMNS)[number], number>;

/** Rule 3: a test click with a key must name the key's own program. */
export async function recordTestClick(deps: AppDeps, origin: ClickOrigin, token: string | undefined, body: Record<string, unknown>, link: ClickLink, requested?: number): Promise<TestClickResponse> {
  const programId = requested ?? link.programId;
  // Only a key and a program_id sent together are compared; a test event without a key is not checked.
  if (token && requested !== undefined) {
    const key = await findProgramKey(deps.db, token);
    if (!key || key.programId !== programId) fail(ERRORS.programIdMismatch);
  }
  const now = deps.now();
  const exists = await deps.db('programs').where({ id: programId }).first('id');
  if (!exists) fail(ERRORS.clickInvalidLinkConfig);
  const clickId = str(body.existing_click_id)?.slice(0, 64) ?? newClickId();
  const eventId = await insertId(deps.db, 'click_events', rowObject(CLICK_EVENT_COLUMNS, clickEventRow(origin, deps, body, link, programId, clickId, true, now)));
  return { success: true, message: 'Test click recorded', data: { eventId, programId, test_mode: true } };
}

/**
 * Rules 2 and 3.1: records a click for a resolved link and answers its click id. Real clicks are
 * group-committed with their counters; a `test` click (synthetic chains) writes a test-flagged
 * customer and event at once and touches no counter.
 */
export async function recordClick(deps: AppDeps, origin: ClickOrigin, body: Record<string, unknown>, link: ClickLink, test = false): Promise<ClickResponse> {
  const now = deps.now();
  const existingClickId = str(body.existing_click_id);
  let clickId: string | undefined;
  if (existingClickId && CLICK_ID.test(existingClickId)) {
    // First-click attribution (3.1): an existing customer of this program keeps its click id and partner.
    const existing = await deps.db('customers').where({ click_id: existingClickId, program_id: link.programId, is_test: test }).first('click_id');
    clickId = existing?.click_id;
  }
  const id = clickId ?? newClickId(now);
  const userAgent = userAgentOf(origin, body);
  const event = clickEventRow(origin, deps, body, link, link.programId, id, test, now, userAgent);
  // A synthetic chain's test click is the CLI's own, whatever its user agent: it always gets its customer.
  const bot = !test && event[EVENT_COLUMN.is_bot] === true;
  // CUSTOMER_COLUMNS order. A bot's click creates no customer: it is answered like any click, but
  // its click id attributes nothing (a lead or sale naming it finds no customer; docs/analytics.md).
  const customer = clickId === undefined && !bot ? [id, link.programId, link.partnerId, link.id, 'click', test, now, now] : undefined;
  if (test) {
    await deps.db.transaction(async (trx) => {
      if (customer) await trx('customers').insert(rowObject(CUSTOMER_COLUMNS, customer));
      await trx('click_events').insert(rowObject(CLICK_EVENT_COLUMNS, event));
    });
  } else {
    deps.faults.beforeClickSubmit?.();
    // The visitor, for unique clicks: the click id (a returning cookie), and the address with the user agent.
    const visitors = [{ clickId: id }, { address: origin.ip, userAgent: userAgent ?? '' }];
    const dims = bot ? null : clickDimensions(clickFacts(event));
    await deps.clicks.submit({ customer, event, linkId: link.id, partnerId: link.partnerId, programId: link.programId, at: now, bot, visitors, dims });
  }
  return { success: true, click_id: id, partner_code: link.partnerCode, cookie_window_days: link.attributionWindowDays };
}
