/**
 * Which program sent this Stripe event? The signing secret that verifies it decides; nothing in
 * the unverified payload is trusted on its own.
 *
 * - `event.account` present (an event of a connected account): only the programs connected to that
 *   `acct_…` are tried.
 * - `event.account` absent (the advertiser's own account endpoint): every connected program is
 *   tried, the one named by `metadata.program_id` first (a hint that saves work, never a proof).
 * - Several programs may hold the same secret (one endpoint serving several programs of one
 *   account): they form the event's program set. Sales go to the set's member named by
 *   `metadata.program_id`, else to the lowest program id; refunds and disputes look for their
 *   sale in the whole set.
 *
 * Verification is `stripe.webhooks.constructEvent(rawBody, header, secret)` with the library's
 * default tolerance (300 s).
 */
import Stripe from 'stripe';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import type { Db } from '../../db/knex.js';
import { programIdHint } from '../../domain/stripe-events.js';

export interface VerifiedEvent {
  event: unknown;
  /** The program the event is recorded under (see above). */
  programId: number;
  /** Every program whose stored secret is the one that verified the event. */
  programIds: number[];
  /** `metadata.program_id` of the event's object, if any. */
  hint?: number;
}

interface Candidate {
  id: number;
  secret: string;
}

function looseParse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/**
 * A header whose timestamp is outside the tolerance can never verify; refusing it before trying
 * any secret keeps replays of old deliveries cheap to turn away.
 */
function plausibleHeader(header: string, nowSeconds: number): boolean {
  const t = /(?:^|,)\s*t=(\d{1,12})(?:,|$)/.exec(header);
  if (!t || !/(?:^|,)\s*v1=/.test(header)) return false;
  return Math.abs(nowSeconds - Number(t[1])) <= Stripe.webhooks.DEFAULT_TOLERANCE;
}

function verifies(raw: Buffer, header: string, secret: string): { ok: true; event: unknown } | { ok: false } {
  try {
    return { ok: true, event: Stripe.webhooks.constructEvent(raw, header, secret) };
  } catch (err) {
    if (err instanceof Stripe.errors.StripeSignatureVerificationError) return { ok: false };
    // The signature matched but the body is not JSON: a real sender never does that.
    if (err instanceof SyntaxError) fail(ERRORS.stripeEventInvalid);
    throw err;
  }
}

export async function verifyStripeEvent(db: Db, raw: Buffer, header: string | undefined): Promise<VerifiedEvent> {
  if (!header || !header.trim()) fail(ERRORS.stripeSignatureMissing);
  if (!plausibleHeader(header, Math.floor(Date.now() / 1000))) fail(ERRORS.stripeSignatureInvalid);
  const unverified = looseParse(raw) as { account?: unknown } | undefined;
  const account = typeof unverified?.account === 'string' ? unverified.account : undefined;
  const hint = programIdHint(unverified);

  const query = db('programs').whereNotNull('stripe_webhook_secret').orderBy('id', 'asc').select('id', 'stripe_webhook_secret as secret');
  if (account !== undefined) query.where({ stripe_account_id: account });
  const candidates = ((await query) as Array<{ id: number; secret: string }>).map((r): Candidate => ({ id: Number(r.id), secret: String(r.secret) }));
  // The hinted program's secret first; each distinct secret is tried once.
  const ordered = [...candidates.filter((c) => c.id === hint), ...candidates.filter((c) => c.id !== hint)];
  const tried = new Set<string>();
  for (const candidate of ordered) {
    if (tried.has(candidate.secret)) continue;
    tried.add(candidate.secret);
    const result = verifies(raw, header, candidate.secret);
    if (!result.ok) continue;
    const programIds = candidates.filter((c) => c.secret === candidate.secret).map((c) => c.id);
    const programId = hint !== undefined && programIds.includes(hint) ? hint : programIds[0];
    return { event: result.event, programId, programIds, hint };
  }
  fail(ERRORS.stripeSignatureInvalid);
}
