/** POST /api/v1/track/refund — spec 4.4, 7.5: authentication and input; the rules are domain/refund.ts. */
import type { Context } from 'koa';
import { ERRORS, INPUT_RULES, REFUND_REASONS, type RefundReason, type RefundResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { str } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { refundSale } from '../../domain/refund.js';

export function trackRefund(deps: AppDeps) {
  return async function handleRefund(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.refund, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const body = readBody(ctx);
    const transactionId = str(body.transaction_id);
    if (!transactionId || transactionId.length > INPUT_RULES.transactionIdMaxLength) fail(ERRORS.refundTransactionId);
    let reason: RefundReason = 'refund';
    if (body.reason !== undefined && body.reason !== null) {
      if (!(REFUND_REASONS as readonly unknown[]).includes(body.reason)) fail(ERRORS.refundReason);
      reason = body.reason as RefundReason;
    }
    if (body.refund_reason !== undefined && body.refund_reason !== null && typeof body.refund_reason !== 'string') fail(ERRORS.refundRefundReason);
    const refundReason = typeof body.refund_reason === 'string' ? body.refund_reason.slice(0, INPUT_RULES.storedText.refund_reason) : null;
    const now = deps.now();
    const data = await deps.atomic((trx) => refundSale(trx, { programId: key.programId, transactionId, reason, refundReason }, now));
    ctx.body = { success: true, data } satisfies RefundResponse;
  };
}
