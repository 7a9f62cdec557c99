/** `start` against a database that is not up yet: wait, with back-off, instead of exiting at once. */
import type { Db } from '../db/knex.js';
import type { Logger } from '../logger.js';
import { isDatabaseUnreachable } from './service-state.js';

/**
 * Resolves once `select 1` answers; retries an unreachable database (refused, starting up) with
 * back-off from 250 ms to 5 s, one JSON log line per attempt, for at most `maxWaitMs`. Any other
 * error (a wrong password, a missing database) is not going to pass by waiting: it throws at once.
 */
export async function waitForDatabase(db: Db, maxWaitMs: number, logger: Logger): Promise<void> {
  const started = Date.now();
  let delay = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.raw('select 1');
      if (attempt > 1) logger.info({ attempt, waitedMs: Date.now() - started }, 'database reachable');
      return;
    } catch (err) {
      const waited = Date.now() - started;
      if (!isDatabaseUnreachable(err) || waited + delay > maxWaitMs) throw err;
      const e = err as { code?: unknown; message?: unknown };
      logger.warn({ attempt, retryInMs: delay, waitedMs: waited, maxWaitMs, code: e.code, reason: String(e.message ?? err) }, 'database unreachable at start: waiting');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }
}
