/**
 * POST /api/v1/webhooks/stripe — the payment-processor intake of spec 6.1 (docs/stripe.md).
 *
 * 1. The signature is verified with the `stripe` library against the signing secret stored for
 *    the connected program (stripe-verify.ts); a bad or missing one answers 400 and stores nothing.
 * 2. One transaction holds the event's dedup row (`processor_events`, unique per event id and
 *    program) and all of its effects. The dedup row is written first, so of two identical
 *    deliveries at once the second waits on the unique index and then answers 200 `duplicate`.
 *    A failure rolls back both, answers 5xx, and Stripe's retry processes the event again.
 * 3. Answers: `{success: true, data: {event_id, type, action, reason?, ...}}` once stored.
 */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../http/api-error.js';
import type { RequestState } from '../../http/state.js';
import type { AppDeps } from '../../deps.js';
import { isUniqueViolation } from '../../db/knex.js';
import { readEnvelope } from '../../domain/stripe-events.js';
import { verifyStripeEvent } from './stripe-verify.js';
import { applyStripeEvent, type EventOutcome } from './stripe-effects.js';

/** 512 KiB: Stripe event payloads are far smaller, but invoices with many lines grow. */
export const STRIPE_WEBHOOK_BODY_LIMIT = 512 * 1024;

class DuplicateEvent extends Error {
  constructor() {
    super('duplicate Stripe event');
  }
}

export interface StripeWebhookAnswer {
  success: true;
  data: { event_id: string; type: string; action: EventOutcome['action'] | 'duplicate'; reason?: string; program_id: number } & Record<string, unknown>;
}

export function stripeWebhook(deps: AppDeps) {
  return async function handleStripeWebhook(ctx: Context): Promise<void> {
    const state = ctx.state as RequestState;
    const raw = state.rawBody ?? Buffer.alloc(0);
    const verified = await verifyStripeEvent(deps.db, raw, ctx.get('stripe-signature') || undefined);
    const envelope = readEnvelope(verified.event);
    if (!envelope) fail(ERRORS.stripeEventInvalid);
    const now = deps.now();
    const head = { event_id: envelope.id, type: envelope.type };

    let outcome: EventOutcome;
    try {
      outcome = await deps.db.transaction(async (trx) => {
        try {
          await trx('processor_events').insert({
            provider: 'stripe',
            event_id: envelope.id,
            type: envelope.type,
            program_id: verified.programId,
            account: envelope.account ?? null,
            livemode: envelope.livemode,
            action: 'processing',
            event_created_at: envelope.createdAt ?? null,
            received_at: now,
          });
        } catch (err) {
          if (isUniqueViolation(err)) throw new DuplicateEvent();
          throw err;
        }
        const result = await applyStripeEvent(trx, { deps, envelope, programId: verified.programId, programIds: verified.programIds, now });
        await trx('processor_events')
          .where({ event_id: envelope.id, program_id: verified.programId })
          .update({ action: result.action, reason: result.reason?.slice(0, 64) ?? null, sale_id: result.saleId ?? null });
        return result;
      });
    } catch (err) {
      if (!(err instanceof DuplicateEvent)) throw err;
      ctx.body = { success: true, data: { ...head, action: 'duplicate', reason: 'event_already_received', program_id: verified.programId } } satisfies StripeWebhookAnswer;
      return;
    }

    if (outcome.action !== 'ignored' || outcome.reason !== 'unsupported_event_type') {
      deps.logger.info({ requestId: state.requestId, eventId: envelope.id, type: envelope.type, programId: verified.programId, action: outcome.action, reason: outcome.reason }, 'stripe event');
    }
    const data: StripeWebhookAnswer['data'] = { ...head, action: outcome.action, program_id: verified.programId, ...(outcome.reason ? { reason: outcome.reason } : {}), ...(outcome.data ?? {}) };
    ctx.body = { success: true, data } satisfies StripeWebhookAnswer;
  };
}
