/**
 * POST /api/v1/cli/test-event (program key): one test event of a kind, or a synthetic
 * click → lead → sale chain through the real tracking code on test-flagged fixture records (4.7).
 * Test records never reach listings, metrics or commissions.
 */
import { randomBytes } from 'node:crypto';
import { insertId } from '../../db/insert-id.js';
import type { Context } from 'koa';
import { ERRORS, HEADERS, LIMITS, TEST_EVENT_TYPES, type ChainStep, type CliChainResponse, type CliTestEventResponse } from '@reftrack/contract';
import { ApiError, fail } from '../../http/api-error.js';
import { readBody } from '../../http/input.js';
import type { RequestState } from '../../http/state.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS, type KeyContext } from '../../auth/program-key.js';
import { ensureTestFixture } from '../../domain/test-fixture.js';
import { newClickId } from '../../domain/ids.js';
import { recordClick, resolveLink } from '../track/click.js';
import { performLead, testLead } from '../track/lead.js';
import { realSale, testSale } from '../track/sale.js';
import { parseSaleInput } from '../track/sale-input.js';

const HOUR_MS = 3_600_000;

/**
 * Takes one of the program's chain slots for this hour in a single atomic upsert (a unique key
 * per program and hour), so the cap holds across processes. Checked before anything is written.
 */
async function takeChainSlot(deps: AppDeps, programId: number, now: number): Promise<number> {
  const windowStart = Math.floor(now / HOUR_MS) * HOUR_MS;
  const result = await deps.db.raw(
    `insert into chain_counters (program_id, window_start, count) values (?, ?, 1)
     on conflict (program_id, window_start) do update set count = chain_counters.count + 1
     where chain_counters.count < ? returning count`,
    [programId, windowStart, LIMITS.syntheticChainsPerHour],
  );
  const rows = (Array.isArray(result) ? result : result.rows) as Array<{ count: number }>;
  if (rows.length === 0) {
    const seconds = Math.max(1, Math.ceil((windowStart + HOUR_MS - now) / 1000));
    throw new ApiError(ERRORS.cliChainCap, {}, {}, { status: 429, retry_after_seconds: seconds });
  }
  return LIMITS.syntheticChainsPerHour - Number(rows[0].count);
}

async function step(name: ChainStep['step'], run: () => Promise<Record<string, unknown>>): Promise<ChainStep> {
  const started = performance.now();
  try {
    const detail = await run();
    return { step: name, ok: true, status: 200, duration_ms: Math.round(performance.now() - started), detail };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { step: name, ok: false, status: err.status, duration_ms: Math.round(performance.now() - started), detail: { code: err.spec.code ?? null, message: err.message } };
  }
}

async function runChain(ctx: Context, deps: AppDeps, key: KeyContext): Promise<CliChainResponse['data']> {
  const now = deps.now();
  const remaining = await takeChainSlot(deps, key.programId, now).catch((err) => {
    if (err instanceof ApiError) ctx.set(HEADERS.retryAfter, String(err.extra.retry_after_seconds));
    throw err;
  });
  const fixture = await ensureTestFixture(deps.db, key.programId, now);
  deps.links.invalidate(fixture.shortLink);
  const chainId = `chain_${randomBytes(8).toString('hex')}`;
  const customerKey = `reftrack-test-${chainId}`;
  const affiliateUrl = `https://${fixture.domain}/?aff=${fixture.shortLink}`;
  const steps: ChainStep[] = [];
  let clickId = '';
  steps.push(
    await step('click', async () => {
      const link = await resolveLink(deps, affiliateUrl);
      const res = await recordClick(deps, { ip: ctx.ip, headers: ctx.req.headers }, { affiliate_url: affiliateUrl, page_url: affiliateUrl, user_agent: 'reftrack-synthetic-chain' }, link, true);
      clickId = res.click_id;
      return { click_id: res.click_id, partner_code: res.partner_code };
    }),
  );
  if (steps[0].ok) {
    steps.push(
      await step('lead', async () => {
        const res = await performLead(deps.atomic, key, { clickId, customerKey, email: null, sessionId: null, pageUrl: null }, deps.now(), true);
        return { lead_id: res.data.lead_id, customer_status: res.data.customer_status };
      }),
    );
  }
  if (steps[1]?.ok) {
    steps.push(
      await step('sale', async () => {
        const input = parseSaleInput({ transaction_id: `test_${chainId}`, amount_cents: 1000, currency: 'USD', customer_key: customerKey }, deps.now());
        const outcome = await deps.atomic((trx) => realSale(trx, deps, input, key.programId, deps.now(), true));
        if (outcome.kind !== 'recorded') fail(ERRORS.salePartnerRequired);
        return { ...outcome.response.data };
      }),
    );
  }
  await deps.db('tracking_logs').insert({ program_id: key.programId, kind: 'chain', is_test: true, message: `Synthetic chain ${chainId}: ${steps.map((s) => `${s.step}=${s.status}`).join(' ')}`, created_at: deps.now() });
  return { chain_id: chainId, passed: steps.length === 3 && steps.every((s) => s.ok), steps, chains_remaining_this_hour: remaining };
}

async function singleEvent(deps: AppDeps, key: KeyContext, type: (typeof TEST_EVENT_TYPES)[number]): Promise<CliTestEventResponse['data']> {
  const now = deps.now();
  if (type === 'click') {
    const fixture = await ensureTestFixture(deps.db, key.programId, now);
    const link = await deps.db('referral_links').where({ short_link: fixture.shortLink }).first('id');
    const clickId = newClickId();
    const eventId = await insertId(deps.db, 'click_events', { program_id: key.programId, link_id: link.id, partner_id: fixture.partnerId, click_id: clickId, user_agent: 'reftrack-test-event', is_test: true, click_timestamp: now, created_at: now });
    await deps.db('tracking_logs').insert({ program_id: key.programId, kind: 'click', is_test: true, message: 'Test click recorded', created_at: now });
    return { event_type: 'click', event_id: eventId, test_mode: true, click_id: clickId };
  }
  if (type === 'lead') {
    const res = await deps.db.transaction((trx) => testLead(trx, { customerKey: 'reftrack-test-lead', email: null, sessionId: null, pageUrl: null }, key.programId, now));
    return { event_type: 'lead', event_id: res.data.lead_id, test_mode: true };
  }
  const outcome = await deps.db.transaction((trx) => testSale(trx, parseSaleInput({ additional_data: { test_mode: true } }, now), key.programId, now));
  const data = outcome.kind === 'recorded' ? (outcome.response.data as { sale_id: number; transaction_id: string }) : undefined;
  return { event_type: 'sale', event_id: data!.sale_id, test_mode: true, transaction_id: data!.transaction_id };
}

export function cliTestEvent(deps: AppDeps) {
  return async function handleTestEvent(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.cli, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const body = readBody(ctx);
    if (body.type === 'chain' || body.event_type === 'chain') {
      (ctx.state as RequestState).failure = ERRORS.cliChainFailed;
      ctx.body = { success: true, data: await runChain(ctx, deps, key) } satisfies CliChainResponse;
      return;
    }
    const type = body.event_type;
    if (typeof type !== 'string' || !(TEST_EVENT_TYPES as readonly string[]).includes(type)) fail(ERRORS.cliTestEventType, { value: typeof type === 'string' ? type : String(type) });
    ctx.body = { success: true, data: await singleEvent(deps, key, type as (typeof TEST_EVENT_TYPES)[number]) } satisfies CliTestEventResponse;
  };
}
