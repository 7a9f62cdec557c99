/**
 * What the process knows about its own health, for /readyz, the metrics and the logs: whether it
 * is draining, whether the database answered the last request that needed it, whether Redis is up.
 * Each change of state is logged once, rather than a line (and a stack) per request.
 */
import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

/** Seconds a client is told to wait when the database is unreachable (Retry-After). */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Errors that mean "the database cannot be reached" rather than "this query is wrong": refused or
 * reset connections, a pool that timed out waiting for one, PostgreSQL shutting down or refusing
 * connections (SQLSTATE class 08, 57P01-57P03), a locked or unopenable SQLite file.
 */
export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 3) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE', 'EAI_AGAIN'].includes(code)) return true;
  if (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
  if (['SQLITE_BUSY', 'SQLITE_CANTOPEN', 'SQLITE_IOERR'].includes(code)) return true;
  if (e.name === 'KnexTimeoutError') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  if (/Connection terminated|connect ECONNREFUSED|Timeout acquiring a connection|the database system is (starting up|shutting down)/i.test(message)) return true;
  return isDatabaseUnreachable(e.cause, depth + 1);
}

export class ServiceState {
  draining = false;
  databaseUp = true;
  /** undefined: no Redis configured. */
  redisUp: boolean | undefined;

  private probeTimer: NodeJS.Timeout | undefined;

  /** `probe`: a cheap query, run every second while the database is down, to notice its return. */
  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics,
    private readonly probe?: () => Promise<unknown>,
  ) {}

  stop(): void {
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
  }

  startDraining(graceMs: number): void {
    if (this.draining) return;
    this.draining = true;
    this.metrics.draining.set(1);
    this.logger.info({ graceMs }, 'draining: /readyz answers 503; still serving until the grace period ends');
  }

  /** A request failed because the database was unreachable (counted; logged on the change only). */
  databaseFailed(err: unknown): void {
    this.metrics.databaseUnavailable.inc();
    if (!this.databaseUp) return;
    this.databaseUp = false;
    this.metrics.databaseUp.set(0);
    const e = err as { code?: unknown; message?: unknown };
    this.logger.error({ code: e?.code, reason: String(e?.message ?? err) }, 'database unreachable: requests that need it answer their failure with Retry-After');
    if (this.probe && !this.probeTimer) {
      let probing = false;
      this.probeTimer = setInterval(() => {
        if (probing) return;
        probing = true;
        this.probe!().then(
          () => this.databaseAnswered(),
          () => undefined,
        ).finally(() => (probing = false));
      }, 1_000);
      this.probeTimer.unref();
    }
  }

  /** The database answered again. */
  databaseAnswered(): void {
    if (this.databaseUp) return;
    this.databaseUp = true;
    this.stop();
    this.metrics.databaseUp.set(1);
    // At the outage line's level, so that a log filtered to warnings still shows the outage end.
    this.logger.warn('database reachable again');
  }

  redisChanged(up: boolean, reason?: string): void {
    if (this.redisUp === up) return;
    const first = this.redisUp === undefined;
    this.redisUp = up;
    this.metrics.redisUp.set(up ? 1 : 0);
    if (up && first) return; // the normal start says nothing
    if (up) this.logger.warn('redis reachable again: rate limits are shared across processes again');
    else this.logger.warn({ reason }, 'redis unreachable: rate limits fall back to per-process memory (weaker: each process counts on its own)');
  }
}
