/** POST /api/v1/track/click — spec 4.1, 7.3: the body and the request's origin; the rules are domain/click.ts. */
import type { Context } from 'koa';
import { readBody } from '../../http/input.js';
import { testModeOf } from '../../domain/json-values.js';
import type { AppDeps } from '../../deps.js';
import { bearerToken } from '../../auth/bearer.js';
import { recordClick, recordTestClick, resolveLink, type ClickOrigin } from '../../domain/click.js';

export function trackClick(deps: AppDeps) {
  return async function handleClick(ctx: Context): Promise<void> {
    const body = readBody(ctx);
    const link = await resolveLink(deps, body.affiliate_url);
    const test = testModeOf(body);
    const origin: ClickOrigin = { ip: ctx.ip, headers: ctx.req.headers };
    ctx.body = test.testMode
      ? await recordTestClick(deps, origin, bearerToken(ctx.get('authorization')), body, link, test.programId)
      : await recordClick(deps, origin, body, link);
  };
}
