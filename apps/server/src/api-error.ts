/** Errors are values: a catalogue entry from the contract, its template parameters and extras. */
import { formatMessage, type ErrorSpec } from '@reftrack/contract';

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly spec: ErrorSpec,
    readonly params: Record<string, string | number> = {},
    /** `error.details` of the platform envelope */
    readonly details: Record<string, unknown> = {},
    /** extra members of a typed envelope's `error` object */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(formatMessage(spec.message, params));
    this.status = spec.status;
  }
}

export function fail(spec: ErrorSpec, params?: Record<string, string | number>, details?: Record<string, unknown>, extra?: Record<string, unknown>): never {
  throw new ApiError(spec, params, details, extra);
}
