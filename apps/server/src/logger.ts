import pino from 'pino';

export type Logger = pino.Logger;

/** Pattern of a value PostgreSQL quotes at the end of a message (`invalid input syntax for type integer: "…"`). */
const TRAILING_QUOTED_VALUE = /: "(?:[^"\\]|\\.)*"$/;

/** An error's message with the values a database may quote in it left out. */
const safeMessage = (message: string): string => message.replace(TRAILING_QUOTED_VALUE, ': [value]');

/**
 * What a logged error may carry: its type, code, message and stack, and for database errors the
 * names (not the values) of the table, column and constraint. Everything else an error carries is
 * left out: PostgreSQL's `detail` and `where` quote row values ("Key (x)=(…) already exists"), a
 * Stripe signature error carries the header and the whole payload, an HTTP client error its
 * request. Statement values are not in the message either: the database clients are told not to
 * write them there (`compileSqlOnError: false`, db/knex.ts).
 */
export function errorForLog(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return value;
  const err = value as Error & Record<string, unknown>;
  const message = safeMessage(String(err.message ?? ''));
  const out: Record<string, unknown> = { type: err.constructor?.name ?? err.name, message };
  if (typeof err.code === 'string' || typeof err.code === 'number') out.code = err.code;
  if (typeof err.status === 'number') out.status = err.status;
  for (const name of ['table', 'column', 'constraint'] as const) if (typeof err[name] === 'string') out[name] = err[name];
  if (typeof err.stack === 'string') out.stack = err.message ? err.stack.replace(err.message, message) : err.stack;
  if (err.cause !== undefined && depth < 3) out.cause = errorForLog(err.cause, depth + 1);
  return out;
}

/**
 * Logs go to stdout through pino's asynchronous destination, which coalesces the lines written
 * while a write is in flight: one system call per access line would cost the hot path more than
 * the request itself. Flushed on shutdown.
 */
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { service: 'reftrack-server' },
      serializers: { err: errorForLog },
      // Credentials never reach the logs, whichever object carries them; nor do request headers.
      // (No new `*.` paths: each wildcard is a walk over every logged object, the access line included.)
      redact: {
        paths: ['req.headers', 'headers', 'authorization', 'api_key', 'token', 'id_token', 'webhook_secret', '*.api_key', '*.token'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 1, sync: false }),
  );
}
