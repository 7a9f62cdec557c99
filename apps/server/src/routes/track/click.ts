/** POST /api/v1/track/click — spec 4.1, 3.1, 3.3, 7.3. The hot path: reads cached, writes group-committed. */
import type { Context } from 'koa';
import { ERRORS, type ClickResponse, type TestClickResponse } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import { readBody, str, testModeOf, text } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { newClickId } from '../../domain/ids.js';
import { parseUserAgent } from '../../domain/user-agent.js';
import { findProgramKey } from '../../auth/program-key.js';
import { bearerToken } from '../../auth/bearer.js';
import type { ResolvedLink } from '../../db/link-cache.js';

const URL_MAX = 2048;

/** Rule 1: the `aff` value of `affiliate_url`, resolved to an active, complete referral link. */
async function resolveLink(deps: AppDeps, affiliateUrl: unknown): Promise<ResolvedLink & { partnerId: number; programId: number; partnerCode: string }> {
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
  const link = aff.length <= 200 ? await deps.links.get(aff) : null;
  if (!link) fail(ERRORS.clickLinkNotFound);
  if (link.partnerId === null || link.programId === null || link.partnerCode === null) fail(ERRORS.clickInvalidLinkConfig);
  if (!link.active) fail(ERRORS.clickLinkDisabled);
  return link as ResolvedLink & { partnerId: number; programId: number; partnerCode: string };
}

function clickEventRow(ctx: Context, deps: AppDeps, body: Record<string, unknown>, now: number) {
  const userAgent = text(body.user_agent, 1024) ?? (ctx.get('user-agent') || null);
  return {
    session_id: text(body.session_id, 255),
    page_url: text(body.page_url, URL_MAX),
    page_title: text(body.page_title, 512),
    referrer_url: text(body.referrer_url, URL_MAX),
    screen_resolution: text(body.screen_resolution, 32),
    viewport_size: text(body.viewport_size, 32),
    language: text(body.language, 35),
    timezone: text(body.timezone, 64),
    user_agent: userAgent,
    ...deps.geo.lookup(ctx.ip, ctx.req.headers),
    ...parseUserAgent(userAgent ?? undefined),
    click_timestamp: now,
    created_at: now,
  };
}

/** Rule 3: a test click with a key must name the key's own program. */
async function testClick(ctx: Context, deps: AppDeps, body: Record<string, unknown>, link: ResolvedLink & { programId: number }, requested?: number): Promise<TestClickResponse> {
  const programId = requested ?? link.programId;
  const token = bearerToken(ctx.get('authorization'));
  if (token) {
    const key = await findProgramKey(deps.db, token);
    if (!key || key.programId !== programId) fail(ERRORS.programIdMismatch);
  }
  const now = deps.now();
  const exists = await deps.db('programs').where({ id: programId }).first('id');
  if (!exists) fail(ERRORS.clickInvalidLinkConfig);
  const [row] = await deps.db('click_events')
    .insert({
      ...clickEventRow(ctx, deps, body, now),
      program_id: programId,
      link_id: link.id,
      partner_id: link.partnerId,
      click_id: str(body.existing_click_id)?.slice(0, 64) ?? newClickId(),
      is_test: true,
    })
    .returning('id');
  return { success: true, message: 'Test click recorded', data: { eventId: Number(row.id ?? row), programId, test_mode: true } };
}

export function trackClick(deps: AppDeps) {
  return async function handleClick(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    const link = await resolveLink(deps, body.affiliate_url);
    const test = testModeOf(body);
    if (test.testMode) {
      ctx.body = await testClick(ctx, deps, body, link, test.programId);
      return;
    }
    const now = deps.now();
    const existingClickId = str(body.existing_click_id);
    let clickId: string | undefined;
    if (existingClickId && existingClickId.length <= 64) {
      // First-click attribution (3.1): an existing customer of this program keeps its click id and partner.
      const existing = await deps.db('customers').where({ click_id: existingClickId, program_id: link.programId, is_test: false }).first('click_id');
      clickId = existing?.click_id;
    }
    const isNew = clickId === undefined;
    const id = clickId ?? newClickId();
    await deps.clicks.submit({
      customer: isNew
        ? { click_id: id, program_id: link.programId, partner_id: link.partnerId, link_id: link.id, status: 'click', is_test: false, click_at: now, created_at: now }
        : undefined,
      event: { ...clickEventRow(ctx, deps, body, now), program_id: link.programId, link_id: link.id, partner_id: link.partnerId, click_id: id, is_test: false },
      linkId: link.id,
      partnerId: link.partnerId,
      programId: link.programId,
      at: now,
    });
    const response: ClickResponse = { success: true, click_id: id, partner_code: link.partnerCode, cookie_window_days: link.attributionWindowDays };
    ctx.body = response;
  };
}
