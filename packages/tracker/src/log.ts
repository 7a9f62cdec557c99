import { BRAND } from '@reftrack/contract';

let debug = false;

export function setDebug(on: boolean): void {
  debug = on;
}

/** Info and warn only in debug mode; errors always, since they mean lost attribution. */
export function log(level: 'info' | 'warn' | 'error', ...args: unknown[]): void {
  if (debug || level == 'error') console[level](BRAND.debugPrefix, ...args);
}
