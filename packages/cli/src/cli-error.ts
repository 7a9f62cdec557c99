import { EXIT, type ExitCode } from './exit-codes.js';

/**
 * Codes the CLI itself reports, beside the server's `error.code` values. Kept in one place so the
 * docs and the JSON output agree.
 */
export const CLI_CODES = {
  usage: 'usage_error',
  notLoggedIn: 'not_logged_in',
  loginServerMismatch: 'login_server_mismatch',
  missingApiKey: 'missing_api_key',
  loginExpired: 'login_expired',
  network: 'network_error',
  timeout: 'timeout',
  invalidResponse: 'invalid_response',
  notReftrackServer: 'not_reftrack_server',
  chainFailed: 'chain_failed',
  /** `logout` removed the local token but could not revoke it on the server. */
  notRevoked: 'not_revoked',
  configPermissions: 'config_permissions',
  interrupted: 'interrupted',
  programNotFound: 'program_not_found',
  cancelled: 'cancelled',
} as const;

export interface CliErrorInit {
  code: string;
  message: string;
  exitCode: ExitCode;
  /** HTTP status when the error came from the server; null for local failures. */
  status?: number | null;
  /** What the person should do next. */
  hint?: string | null;
  requestId?: string | null;
  retryAfterSeconds?: number | null;
  /** The command already printed its result document (a failed chain); JSON mode adds no second one. */
  resultPrinted?: boolean;
  cause?: unknown;
}

/** Every failure the CLI reports: rendered once, by the output module, with its exit code. */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly status: number | null;
  readonly hint: string | null;
  readonly requestId: string | null;
  readonly retryAfterSeconds: number | null;
  readonly resultPrinted: boolean;

  constructor(init: CliErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CliError';
    this.code = init.code;
    this.exitCode = init.exitCode;
    this.status = init.status ?? null;
    this.hint = init.hint ?? null;
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.resultPrinted = init.resultPrinted ?? false;
  }
}

export function usageError(message: string, hint?: string): CliError {
  return new CliError({ code: CLI_CODES.usage, message, exitCode: EXIT.usage, hint });
}
