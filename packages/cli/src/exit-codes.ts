import { BRAND } from '@reftrack/contract';

/** Process exit codes of `reftrack`. Scripts and CI branch on these, so they never change meaning. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  auth: 3,
  rateLimited: 4,
  /** The person pressed Ctrl-C (128 + SIGINT), as shells report it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** One line per code, shown by `reftrack --help` and mirrored in docs/cli.md. */
export const EXIT_CODE_HELP = `Exit codes:
  0  success
  1  failure (server error, network error, failed chain, expired login, logout that could not revoke)
  2  usage error (unknown command or flag, missing or invalid value)
  3  authentication: run \`${BRAND.cli} login\` (init, programs, keys) or fix the program key (status, test-event)
  4  rate limited: wait for the time shown, then retry`;

/** Exit code for an HTTP error status, before any code-specific refinement. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 429) return EXIT.rateLimited;
  return EXIT.failure;
}
