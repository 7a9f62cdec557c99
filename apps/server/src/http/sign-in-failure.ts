/**
 * A browser sign-in step that failed: one log line with the reason and the request id, and a plain
 * HTML page saying what to try, with that request id — never the JSON envelope, never a stack.
 */
import type { Context } from 'koa';
import { ERRORS, type SignInRefusalReason } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { AppDeps } from '../deps.js';
import { OidcFlowError } from '../auth/oidc-client.js';
import { logRefusal, SignInRefused } from '../accounts/sign-in-refusal.js';
import { refusalPage } from './sign-in-page.js';
import type { RequestState } from './state.js';

const STATUS: Partial<Record<SignInRefusalReason, number>> = { provider_unreachable: 503, state_mismatch: 400, provider_error: 400, token_exchange: 502, cli_session: 400, cross_site: 403, internal: 500 };

export function renderSignInFailure(ctx: Context, deps: Pick<AppDeps, 'logger'>, err: unknown, where: 'dashboard' | 'cli', startOver: string | null): void {
  const requestId = (ctx.state as RequestState).requestId;
  let reason: SignInRefusalReason;
  let status: number;
  let detail: string;
  if (err instanceof SignInRefused) {
    reason = err.reason;
    status = err.status;
    detail = err.detail;
  } else if (err instanceof OidcFlowError) {
    reason = err.reason;
    status = STATUS[reason]!;
    detail = err.detail;
  } else if (err instanceof ApiError && (err.spec === ERRORS.cliCallbackNotFound || err.spec === ERRORS.cliCallbackExpired || err.spec === ERRORS.cliPollMissingState)) {
    reason = 'cli_session';
    status = 400;
    detail = err.message;
  } else {
    reason = 'internal';
    status = 500;
    detail = err instanceof Error ? err.message : String(err);
    deps.logger.error({ err, request_id: requestId }, 'sign-in failed unexpectedly');
  }
  logRefusal(deps.logger, requestId, where, reason, detail);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  ctx.body = refusalPage(reason, requestId, startOver);
}
