/**
 * A debug count of the statements each HTTP request sends to PostgreSQL, for the test that holds
 * the lead and sale routes to their round trips (test/round-trips.test.ts). Off unless the server
 * starts with REFTRACK_COUNT_ROUND_TRIPS=1: then every node-pg query made in a request's async
 * context is counted, and one `round trips` line per request is logged at info level. Work a
 * request only set off (a timer it armed, a pass it poked) counts while the request is running.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Context, Next } from 'koa';
import type { Logger } from '../logger.js';

interface Count {
  open: boolean;
  statements: number;
}

const scope = new AsyncLocalStorage<Count>();
let patched = false;

export const countingRoundTrips = (): boolean => process.env.REFTRACK_COUNT_ROUND_TRIPS === '1';

function countQueries(): void {
  if (patched) return;
  patched = true;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    const count = scope.getStore();
    if (count?.open) count.statements++;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** Wraps the outermost middleware so that each request's statements are counted and logged. */
export function countRoundTrips(logger: Logger, handle: (ctx: Context, next: Next) => Promise<void>) {
  countQueries();
  return function countedRequest(ctx: Context, next: Next): Promise<void> {
    const count: Count = { open: true, statements: 0 };
    return scope.run(count, async () => {
      try {
        await handle(ctx, next);
      } finally {
        count.open = false;
        logger.info({ method: ctx.method, path: ctx.path, status: ctx.status, roundTrips: count.statements }, 'round trips');
      }
    });
  };
}
