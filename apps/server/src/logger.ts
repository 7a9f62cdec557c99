import pino from 'pino';

export type Logger = pino.Logger;

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
      // Credentials never reach the logs, whichever object carries them.
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', 'token', 'id_token', '*.api_key', '*.token'],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 1, sync: false }),
  );
}
