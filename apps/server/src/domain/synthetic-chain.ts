/**
 * Spec 4.7: the CLI's test events and synthetic chains, run through the real tracking rules on
 * test-flagged fixture records (domain/test-fixture.ts). Test records never reach listings,
 * metrics, commissions or the outbox.
 */
import { randomBytes } from 'node:crypto';
import { ERRORS, LIMITS, type ChainStep, type CliChainResponse, type CliTestEventResponse, type TEST_EVENT_TYPES } from '@reftrack/contract';
import { ApiError, fail } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import { insertId } from '../db/insert-id.js';
import { ensureTestFixture } from './test-fixture.js';
import { newClickId } from './ids.js';
import { recordClick, resolveLink, type ClickOrigin } from './click.js';
import { createLead, recordTestLead } from './lead.js';
import { recordSale, recordTestSale } from './sale.js';
import { parseSaleInput } from './sale-input.js';

export type TestEventType = (typeof TEST_EVENT_TYPES)[number];

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

/**
 * 4.7: a synthetic click → lead → sale chain through the real rules on test-flagged records, each
 * step timed. A refused step ends the chain and is reported, not thrown; the hourly cap is thrown
 * (429 with `retry_after_seconds`, which the route also sends as Retry-After).
 */
export async function runSyntheticChain(deps: AppDeps, programId: number, origin: ClickOrigin): Promise<CliChainResponse['data']> {
  const now = deps.now();
  const remaining = await takeChainSlot(deps, programId, now);
  const fixture = await ensureTestFixture(deps.db, programId, now);
  deps.links.invalidate(fixture.shortLink);
  const chainId = `chain_${randomBytes(8).toString('hex')}`;
  const customerKey = `reftrack-test-${chainId}`;
  const affiliateUrl = `https://${fixture.domain}/?aff=${fixture.shortLink}`;
  const steps: ChainStep[] = [];
  let clickId = '';
  steps.push(
    await step('click', async () => {
      const link = await resolveLink(deps, affiliateUrl);
      const res = await recordClick(deps, origin, { affiliate_url: affiliateUrl, page_url: affiliateUrl, user_agent: 'reftrack-synthetic-chain' }, link, true);
      clickId = res.click_id;
      return { click_id: res.click_id, partner_code: res.partner_code };
    }),
  );
  if (steps[0].ok) {
    steps.push(
      await step('lead', async () => {
        const res = await createLead(deps.atomic, programId, { clickId, customerKey, email: null, sessionId: null, pageUrl: null }, 'server', deps.now(), true);
        return { lead_id: res.data.lead_id, customer_status: res.data.customer_status };
      }),
    );
  }
  if (steps[1]?.ok) {
    steps.push(
      await step('sale', async () => {
        const input = parseSaleInput({ transaction_id: `test_${chainId}`, amount_cents: 1000, currency: 'USD', customer_key: customerKey }, deps.now());
        const outcome = await deps.atomic((trx) => recordSale(trx, deps, input, programId, deps.now(), true));
        if (outcome.kind !== 'recorded') fail(ERRORS.salePartnerRequired);
        return { ...outcome.response.data };
      }),
    );
  }
  await deps.db('tracking_logs').insert({ program_id: programId, kind: 'chain', is_test: true, message: `Synthetic chain ${chainId}: ${steps.map((s) => `${s.step}=${s.status}`).join(' ')}`, created_at: deps.now() });
  return { chain_id: chainId, passed: steps.length === 3 && steps.every((s) => s.ok), steps, chains_remaining_this_hour: remaining };
}

/** 4.7: one test event of a kind, test-flagged: it never reaches listings, metrics or commissions. */
export async function recordTestEvent(deps: AppDeps, programId: number, type: TestEventType): Promise<CliTestEventResponse['data']> {
  const now = deps.now();
  if (type === 'click') {
    const fixture = await ensureTestFixture(deps.db, programId, now);
    const link = await deps.db('referral_links').where({ short_link: fixture.shortLink }).first('id');
    const clickId = newClickId();
    const eventId = await insertId(deps.db, 'click_events', { program_id: programId, link_id: link.id, partner_id: fixture.partnerId, click_id: clickId, user_agent: 'reftrack-test-event', is_test: true, click_timestamp: now, created_at: now });
    await deps.db('tracking_logs').insert({ program_id: programId, kind: 'click', is_test: true, message: 'Test click recorded', created_at: now });
    return { event_type: 'click', event_id: eventId, test_mode: true, click_id: clickId };
  }
  if (type === 'lead') {
    const res = await deps.db.transaction((trx) => recordTestLead(trx, { customerKey: 'reftrack-test-lead', email: null, sessionId: null, pageUrl: null }, programId, now));
    return { event_type: 'lead', event_id: res.data.lead_id, test_mode: true };
  }
  const outcome = await deps.db.transaction((trx) => recordTestSale(trx, parseSaleInput({ additional_data: { test_mode: true } }, now), programId, now));
  const data = outcome.kind === 'recorded' ? (outcome.response.data as { sale_id: number; transaction_id: string }) : undefined;
  return { event_type: 'sale', event_id: data!.sale_id, test_mode: true, transaction_id: data!.transaction_id };
}
