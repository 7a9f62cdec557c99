import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

// docs/operator.md's settings that take a count of days, minutes or milliseconds: unset or empty
// takes the default; anything but a whole number in range stops the start with one plain line.
describe('settings given in whole days, minutes or milliseconds', () => {
  it('take their defaults when unset or empty', () => {
    const config = loadConfig({ TRACKING_LOG_RETENTION_DAYS: '', SHUTDOWN_GRACE_MS: '' });
    expect([config.trackingLogRetentionDays, config.shutdownGraceMs, config.databaseWaitMs]).toEqual([90, 5_000, 60_000]);
  });

  it('take a whole number at either end of their range', () => {
    expect(loadConfig({ TRACKING_LOG_RETENTION_DAYS: '0' }).trackingLogRetentionDays).toBe(0);
    expect(loadConfig({ TRACKING_LOG_RETENTION_DAYS: '36500' }).trackingLogRetentionDays).toBe(36_500);
    expect(loadConfig({ UNIQUE_CLICK_WINDOW_MINUTES: '525600' }).uniqueClickWindowMinutes).toBe(525_600);
    expect(loadConfig({ SHUTDOWN_GRACE_MS: '0' }).shutdownGraceMs).toBe(0);
    expect(loadConfig({ DATABASE_WAIT_MS: '86400000' }).databaseWaitMs).toBe(86_400_000);
  });

  it('refuse a value that is not a whole number, is negative or is past the range, naming the setting, the unit and the value', () => {
    for (const value of ['x', '-1', '1.5', '36501']) {
      expect(() => loadConfig({ TRACKING_LOG_RETENTION_DAYS: value }), value).toThrow(new ConfigError(`TRACKING_LOG_RETENTION_DAYS must be a whole number of days from 0 to 36500 (got "${value}")`));
    }
    for (const value of ['ten', '-5', '525601']) {
      expect(() => loadConfig({ UNIQUE_CLICK_WINDOW_MINUTES: value }), value).toThrow(new ConfigError(`UNIQUE_CLICK_WINDOW_MINUTES must be a whole number of minutes from 0 to 525600 (got "${value}")`));
    }
    for (const value of ['5s', '-1', '0.5']) {
      expect(() => loadConfig({ SHUTDOWN_GRACE_MS: value }), value).toThrow(new ConfigError(`SHUTDOWN_GRACE_MS must be a whole number of milliseconds (got "${value}")`));
    }
  });
});
