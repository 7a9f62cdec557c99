/**
 * Waits for the person to finish signing in: polls at the server's interval until the session is
 * complete or expired, with a deadline taken from `expires_at`, a timeout on each request, and
 * back-off on 429, 5xx and network failures (those are passing trouble; a 4xx is final).
 */
import { BRAND, LIMITS } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../../cli-error.js';
import { EXIT } from '../../exit-codes.js';
import type { Client } from '../../http/client.js';
import { parseAuthPoll } from '../../http/validate.js';

export interface PollOptions {
  client: Client;
  state: string;
  /** Epoch milliseconds after which the session is dead (one last poll is still made). */
  deadline: number;
  intervalMs: number;
  requestTimeoutMs?: number;
  maxBackoffMs?: number;
  onRetry?: (info: { error: CliError; waitMs: number }) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface LoginGrant {
  token: string;
  account: { email: string; name: string | null };
}

/** The server's interval within sane bounds: a 0 must not turn into a busy loop, a 3600 into a hang. */
export const MIN_INTERVAL_MS = 100;
export const MAX_INTERVAL_MS = 30_000;
export const clampInterval = (seconds: number): number => Math.min(MAX_INTERVAL_MS, Math.max(MIN_INTERVAL_MS, Math.round(seconds * 1000)));

/**
 * The local time at which the session ends. The server's `Date` header (when present) removes
 * clock skew between the two machines; an absurd result falls back to the spec's 5-minute life.
 */
export function loginDeadline(expiresAt: string, serverDate: string | null, now = Date.now()): number {
  const expires = Date.parse(expiresAt);
  const serverNow = serverDate === null ? Number.NaN : Date.parse(serverDate);
  const deadline = Number.isNaN(serverNow) ? expires : now + (expires - serverNow);
  const longest = now + 2 * LIMITS.cliLoginSessionSeconds * 1000;
  if (Number.isNaN(deadline) || deadline <= now || deadline > longest) return now + LIMITS.cliLoginSessionSeconds * 1000;
  return deadline;
}

export function expiredError(): CliError {
  return new CliError({
    code: CLI_CODES.loginExpired,
    message: 'The sign-in session expired before it was completed.',
    exitCode: EXIT.failure,
    hint: `Run \`${BRAND.cli} login\` again and finish signing in within ${Math.round(LIMITS.cliLoginSessionSeconds / 60)} minutes.`,
  });
}

function isPassing(err: CliError): boolean {
  if (err.code === CLI_CODES.network || err.code === CLI_CODES.timeout) return true;
  return err.status !== null && (err.status === 429 || err.status >= 500);
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function pollForLogin(options: PollOptions): Promise<LoginGrant> {
  const { client, state, deadline, intervalMs } = options;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  let failures = 0;

  for (;;) {
    const last = now() >= deadline;
    let waitMs = intervalMs;
    try {
      const timeoutMs = last ? requestTimeoutMs : Math.min(requestTimeoutMs, Math.max(1_000, deadline - now()));
      const res = await client.call('cliAuthPoll', { query: { state }, timeoutMs });
      const data = parseAuthPoll(res.body);
      if (data.status === 'complete') return { token: data.token, account: data.account };
      if (data.status === 'expired') throw expiredError();
      failures = 0;
    } catch (err) {
      if (!(err instanceof CliError) || !isPassing(err)) throw err;
      if (last) throw expiredError();
      failures += 1;
      const backoff = Math.min(maxBackoffMs, intervalMs * 2 ** failures);
      waitMs = err.retryAfterSeconds !== null ? Math.max(intervalMs, err.retryAfterSeconds * 1000) : backoff;
      options.onRetry?.({ error: err, waitMs });
    }
    if (last) throw expiredError();
    await sleep(Math.min(waitMs, Math.max(0, deadline - now())));
  }
}
