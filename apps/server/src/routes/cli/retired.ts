import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import { ApiError } from '../../api-error.js';

/** POST /api/v1/cli/stripe-connect — retired (9): the processor is connected in the dashboard. */
export async function stripeConnectRetired(_ctx: Context): Promise<void> {
  throw new ApiError(ERRORS.cliStripeConnectRetired);
}
