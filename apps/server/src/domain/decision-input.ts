/** An owner's input on applications and link requests: a decline's body, a list's status filter. */
import { APPLICATION_LIMITS, DECISION_STATUSES, ERRORS, type DecisionStatus } from '@reftrack/contract';
import { fail } from '../api-error.js';
import type { Body } from './json-values.js';

/** A decline's body: an optional reason, an optional notify flag. */
export function parseDecline(body: Body): { reason: string | null; notify: boolean } {
  const raw = body.reason;
  if (raw !== undefined && raw !== null && (typeof raw !== 'string' || raw.length > APPLICATION_LIMITS.reasonMax)) fail(ERRORS.decisionReasonInvalid);
  if (body.notify !== undefined && typeof body.notify !== 'boolean') fail(ERRORS.decisionNotifyInvalid);
  const reason = typeof raw === 'string' && raw.trim() ? raw.trim() : null;
  return { reason, notify: body.notify === true };
}

/** A list's `status` query: absent lists every status; any value but a status is refused, not ignored. */
export function decisionStatusFilter(raw: unknown): DecisionStatus | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !(DECISION_STATUSES as readonly string[]).includes(raw)) fail(ERRORS.decisionStatusInvalid);
  return raw as DecisionStatus;
}
