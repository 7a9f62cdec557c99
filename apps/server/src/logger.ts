import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'reftrack-server' },
    // Credentials never reach the logs, whichever object carries them.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', 'token', 'id_token', '*.api_key', '*.token'],
      censor: '[redacted]',
    },
  });
}
