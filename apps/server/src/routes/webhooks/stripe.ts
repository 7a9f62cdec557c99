/**
 * The payment-processor intake of spec 6.1 (docs/stripe.md), at two addresses:
 *
 * - POST /api/v1/webhooks/stripe/:endpointId — a connection's own address (recommended): the
 *   connection's secret is the only one checked; an unknown id answers 404 before anything else.
 * - POST /api/v1/webhooks/stripe — the shared address: the event's `account` or
 *   `metadata.program_id` chooses one connection, whose secret is the only one checked
 *   (stripe-verify.ts).
 *
 * Both have a rate limit (bucket `stripeWebhook`: per address id, the shared one per client
 * address) and a 512 KiB body limit, checked before any signature; the body is parsed once.
 *
 * 1. A bad or missing signature answers 400 and stores nothing.
 * 2. One transaction holds the event's dedup row (`processor_events`, unique per event id and
 *    program) and all of its effects. The dedup row is written first, so of two identical
 *    deliveries at once the second waits on the unique index and then answers 200 `duplicate`.
 *    A failure rolls back both, answers 5xx, and Stripe's retry processes the event again.
 * 3. Answers: `{success: true, data: {event_id, type, action, reason?, ...}}` once stored.
 */
import type { Context } from 'koa';
import { ERRORS, ROUTES } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import type { RequestState } from '../../http/state.js';
import type { RateSubject } from '../../http/rate-limit.js';
import type { AppDeps } from '../../deps.js';
import type { Db } from '../../db/knex.js';
import { connectionByEndpoint, openSecret, type ProcessorConnection } from '../../db/processor-connections.js';
import { readEnvelope } from '../../domain/stripe-events.js';
import { connectionForSharedEvent, parseEvent, signatureHeader, verifySignature } from './stripe-verify.js';
import { receiveStripeEvent, type EventOutcome } from '../../domain/processor-events.js';

/** 512 KiB: Stripe event payloads are far smaller, but invoices with many lines grow. */
export const STRIPE_WEBHOOK_BODY_LIMIT = 512 * 1024;


export interface StripeWebhookAnswer {
  success: true;
  data: { event_id: string; type: string; action: EventOutcome['action'] | 'duplicate'; reason?: string; program_id: number } & Record<string, unknown>;
}

/** The connection an intake address names, looked up once per request (undefined: not looked up yet). */
interface AddressState {
  stripeConnection?: ProcessorConnection | null;
}

const ADDRESS_PREFIX = ROUTES.stripeWebhookEndpoint.path.replace(':endpointId', '');
const ENDPOINT_ID = /^whe_[0-9A-Za-z]{1,60}$/;

/**
 * The rate subject of a connection's own address: the connection, once its id is found; an unknown
 * id counts per client address, so that made-up ids cannot open a fresh budget each. It also keeps
 * the address out of the logs: they show the id's first characters only, enough to tell
 * connections apart, not enough to spend a connection's budget.
 */
export function intakeAddress(db: Db): RateSubject {
  return async (ctx: Context) => {
    const id = String(ctx.params.endpointId ?? '');
    const state = ctx.state as RequestState & AddressState;
    state.logPath = ADDRESS_PREFIX + id.slice(0, 8) + '…';
    const connection = ENDPOINT_ID.test(id) ? await connectionByEndpoint(db, id) : undefined;
    state.stripeConnection = connection ?? null;
    return connection ? `whe:${connection.id}` : undefined;
  };
}

/** POST /api/v1/webhooks/stripe/:endpointId */
export function stripeWebhookAtAddress(deps: AppDeps) {
  return async function handleStripeWebhookAtAddress(ctx: Context): Promise<void> {
    const state = ctx.state as RequestState & AddressState;
    const id = String(ctx.params.endpointId ?? '');
    const connection = state.stripeConnection !== undefined ? state.stripeConnection : ENDPOINT_ID.test(id) ? await connectionByEndpoint(deps.db, id) : undefined;
    if (!connection) fail(ERRORS.stripeEndpointNotFound);
    const header = signatureHeader(ctx.get('stripe-signature'));
    const raw = state.rawBody ?? Buffer.alloc(0);
    verifySignature(raw, header, openSecret(deps.secrets, connection));
    // Only a verified body is parsed.
    await recordEvent(deps, ctx, connection, parseEvent(raw));
  };
}

/** POST /api/v1/webhooks/stripe */
export function stripeWebhookShared(deps: AppDeps) {
  return async function handleStripeWebhook(ctx: Context): Promise<void> {
    const state = ctx.state as RequestState;
    const header = signatureHeader(ctx.get('stripe-signature'));
    const raw = state.rawBody ?? Buffer.alloc(0);
    const event = parseEvent(raw);
    const connection = await connectionForSharedEvent(deps.db, event);
    verifySignature(raw, header, openSecret(deps.secrets, connection));
    await recordEvent(deps, ctx, connection, event);
  };
}

/** A verified event: its dedup row and effects in one transaction, and the answer. */
async function recordEvent(deps: AppDeps, ctx: Context, connection: ProcessorConnection, event: unknown): Promise<void> {
  const state = ctx.state as RequestState;
  const envelope = readEnvelope(event);
  if (!envelope) fail(ERRORS.stripeEventInvalid);
  const now = deps.now();
  const programId = connection.programId;
  const head = { event_id: envelope.id, type: envelope.type };
  // A Connect endpoint receives the events of every connected account; the connection takes those of its own.
  const otherAccount = envelope.account !== undefined && connection.accountId !== null && envelope.account !== connection.accountId;

  const outcome = await receiveStripeEvent(deps.db, deps, { envelope, programId, otherAccount, now });
  deps.outbox.poke();
  if (outcome === 'duplicate') {
    ctx.body = { success: true, data: { ...head, action: 'duplicate', reason: 'event_already_received', program_id: programId } } satisfies StripeWebhookAnswer;
    return;
  }

  if (outcome.action !== 'ignored' || outcome.reason !== 'unsupported_event_type') {
    deps.logger.info({ requestId: state.requestId, eventId: envelope.id, type: envelope.type, programId, action: outcome.action, reason: outcome.reason }, 'stripe event');
  }
  const data: StripeWebhookAnswer['data'] = { ...head, action: outcome.action, program_id: programId, ...(outcome.reason ? { reason: outcome.reason } : {}), ...(outcome.data ?? {}) };
  ctx.body = { success: true, data } satisfies StripeWebhookAnswer;
}
