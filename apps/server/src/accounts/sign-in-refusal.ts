/**
 * A refused sign-in: the API error the pasted-token routes answer with, plus the reason and detail
 * that the log records (with the request id) and that the browser pages turn into "what to try".
 */
import { ERRORS, type ErrorSpec, type SignInRefusalReason } from '@reftrack/contract';
import { ApiError } from '../api-error.js';
import type { Logger } from '../logger.js';

export class SignInRefused extends ApiError {
  constructor(
    spec: ErrorSpec,
    readonly reason: SignInRefusalReason,
    readonly detail: string,
    details: Record<string, unknown> = {},
    params: Record<string, string | number> = {},
  ) {
    super(spec, params, details);
  }
}

/** The API error of each refusal reason on the JSON routes (dashboard session, CLI callback). */
export const REFUSAL_ERRORS: Partial<Record<SignInRefusalReason, ErrorSpec>> = {
  id_token_invalid: ERRORS.idTokenInvalid,
  issuer: ERRORS.idTokenInvalid,
  audience: ERRORS.idTokenInvalid,
  expired: ERRORS.idTokenInvalid,
  nonce: ERRORS.idTokenNonceMismatch,
  replayed: ERRORS.idTokenReplayed,
  email_unverified: ERRORS.idTokenEmailUnverified,
  no_email: ERRORS.idTokenNoEmail,
  identity_conflict: ERRORS.identityConflict,
};

/** One log line per refused sign-in: an operator finds it by the request id the person was shown. */
export function logRefusal(logger: Logger, requestId: string | undefined, where: 'dashboard' | 'cli' | 'api', reason: SignInRefusalReason, detail: string): void {
  logger.warn({ request_id: requestId, sign_in: where, reason, detail }, `sign-in refused: ${reason}`);
}
