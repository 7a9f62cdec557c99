/** POST /api/v1/track/sale — spec 4.3, 7.5: authentication and input; the rules are domain/sale.ts. */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import type { AppDeps } from '../../deps.js';
import { authenticateProgramKey, KEY_ERRORS } from '../../auth/program-key.js';
import { parseSaleInput } from '../../domain/sale-input.js';
import { DuplicateSale, duplicateSaleError, recordStandaloneSale, type SaleOutcome } from '../../domain/sale.js';

export function trackSale(deps: AppDeps) {
  return async function handleSale(ctx: Context): Promise<void> {
    const key = (await authenticateProgramKey(ctx, KEY_ERRORS.sale, { db: deps.db, publicBaseUrl: deps.config.publicBaseUrl, now: deps.now }))!;
    const now = deps.now();
    const input = parseSaleInput(readBody(ctx), now);
    let outcome: SaleOutcome;
    try {
      outcome = await recordStandaloneSale(deps, input, key.programId, now);
    } catch (err) {
      if (err instanceof DuplicateSale) throw await duplicateSaleError(deps.db, err.transactionId);
      throw err;
    }
    if (outcome.kind === 'partner_required') fail(ERRORS.salePartnerRequired);
    ctx.body = outcome.response;
  };
}
