/** What middleware and handlers share on ctx.state. */
import type { ErrorSpec } from '@reftrack/contract';
import type { KeyContext } from '../auth/key-context.js';

export interface RequestState {
  requestId: string;
  /** The catalogue entry an unexpected failure of this route renders as (e.g. `Click tracking failed`). */
  failure?: ErrorSpec;
  /** Extra members of a typed failure body (readiness adds `retry_after_seconds`). */
  failureExtra?: Record<string, unknown>;
  /** Sale and refund errors always carry `error.code` (7.1). */
  codeFromStatus?: boolean;
  /** CLI 500s carry the request id in the message and in `details.request_id` (7.6). */
  requestIdInDetails?: boolean;
  /** The program key that authenticated this request, for rotation headers and warnings (5.5). */
  programKey?: KeyContext;
  /** Statuses whose response leaves out X-Request-ID (spec 4: GET /api/v1/cli/status 200, 401, 429). */
  omitRequestIdOn?: number[];
  rawBody?: Buffer;
  /** The path the access log and failure logs show, when the real one carries an id not to log (an intake address). */
  logPath?: string;
  /** Set when the body is not a JSON object; thrown by `readBody`. */
  bodyError?: Error;
}
