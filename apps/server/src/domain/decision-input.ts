/** The body of an owner's decline (applications and link requests): an optional reason, an optional notify flag. */
import { APPLICATION_LIMITS, ERRORS } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { Body } from './json-values.js';

export function parseDecline(body: Body): { reason: string | null; notify: boolean } {
  const raw = body.reason;
  if (raw !== undefined && raw !== null && (typeof raw !== 'string' || raw.length > APPLICATION_LIMITS.reasonMax)) fail(ERRORS.decisionReasonInvalid);
  if (body.notify !== undefined && typeof body.notify !== 'boolean') fail(ERRORS.decisionNotifyInvalid);
  const reason = typeof raw === 'string' && raw.trim() ? raw.trim() : null;
  return { reason, notify: body.notify === true };
}
