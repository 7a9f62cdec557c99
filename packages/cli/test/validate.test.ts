import { COMMISSION_TYPES, ERRORS, formatMessage } from '@reftrack/contract';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/cli-error.js';
import { checkGiven, parseCommissionRate, validateInit } from '../src/commands/init/validate.js';
import { checkBaseUrl, requireLogin, resolveApiKey, resolveBaseUrl, DEFAULT_BASE_URL } from '../src/config/resolve.js';
import type { StoredLogin } from '../src/config/store.js';
import { EXIT } from '../src/exit-codes.js';

const full = { name: 'Acme', domain: 'acme.test', commissionType: 'percent', commissionRate: '20' };

function failure(fn: () => unknown): CliError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CliError) return err;
    throw err;
  }
  throw new Error('expected a CliError');
}

describe('init arguments', () => {
  it('builds the request body from complete flags', () => {
    expect(validateInit({ ...full, name: '  Acme  ', advertiserId: '7' })).toEqual({
      name: 'Acme',
      domain: 'acme.test',
      commission_type: 'percent',
      commission_rate: 20,
      advertiser_id: 7,
    });
  });

  it('accepts every commission type of the contract', () => {
    for (const type of COMMISSION_TYPES) expect(validateInit({ ...full, commissionType: type }).commission_type).toBe(type);
  });

  it.each([['name'], ['domain'], ['commissionType'], ['commissionRate']] as const)('reports a missing %s with the server message and exit 2', (key) => {
    const err = failure(() => validateInit({ ...full, [key]: undefined }));
    expect(err.message).toBe(ERRORS.cliInitMissingFields.message);
    expect(err.exitCode).toBe(EXIT.usage);
  });

  it('names only the missing flags in the hint, and treats blanks as missing', () => {
    const err = failure(() => validateInit({ name: 'x', domain: '   ', commissionType: 'percent' }));
    expect(err.hint).toContain('--domain');
    expect(err.hint).toContain('--commission-rate');
    expect(err.hint).not.toContain('--name');
    expect(err.hint).not.toContain('--commission-type');
  });

  it('rejects an unknown commission type with the server message', () => {
    const err = failure(() => validateInit({ ...full, commissionType: 'Percent' }));
    expect(err.message).toBe(formatMessage(ERRORS.cliInitCommissionType.message, { value: 'Percent' }));
    expect(err.exitCode).toBe(EXIT.usage);
  });

  it.each(['0', '-5', 'abc', '20%', '0x14', '1e3', 'Infinity', '', '.'])('rejects commission rate %j', (rate) => {
    if (rate === '') return expect(failure(() => validateInit({ ...full, commissionRate: rate })).message).toBe(ERRORS.cliInitMissingFields.message);
    expect(failure(() => validateInit({ ...full, commissionRate: rate })).message).toBe(ERRORS.cliInitCommissionRate.message);
  });

  it.each([
    ['20', 20],
    ['7.5', 7.5],
    ['.5', 0.5],
    [' 15 ', 15],
  ])('accepts commission rate %j', (rate, value) => {
    expect(parseCommissionRate(rate)).toBe(value);
  });

  it.each(['0', '-1', '1.5', 'abc'])('rejects advertiser id %j', (id) => {
    const err = failure(() => validateInit({ ...full, advertiserId: id }));
    expect(err.exitCode).toBe(EXIT.usage);
    expect(err.message).toContain('--advertiser-id');
  });

  it('checks given values before anything is asked for', () => {
    expect(() => checkGiven({ commissionRate: '20' })).not.toThrow();
    expect(failure(() => checkGiven({ commissionType: 'bogus' })).message).toBe(formatMessage(ERRORS.cliInitCommissionType.message, { value: 'bogus' }));
  });
});

describe('server address and program key', () => {
  const login: StoredLogin = { token: 't', account: { email: 'a@b.c', name: null }, base_url: 'https://track.example.com', logged_in_at: '2026-01-01T00:00:00Z' };

  it('prefers the flag, then REFTRACK_BASE_URL, then the stored login, then localhost', () => {
    expect(resolveBaseUrl({ flag: 'http://flag.test/', env: { REFTRACK_BASE_URL: 'http://env.test' }, login })).toBe('http://flag.test');
    expect(resolveBaseUrl({ env: { REFTRACK_BASE_URL: 'http://env.test' }, login })).toBe('http://env.test');
    expect(resolveBaseUrl({ env: {}, login })).toBe('https://track.example.com');
    expect(resolveBaseUrl({ env: {}, login: null })).toBe(DEFAULT_BASE_URL);
  });

  it.each(['not a url', 'ftp://x.test', 'http://x.test/?a=1', 'http://user:pw@x.test'])('refuses base URL %j as a usage error', (value) => {
    expect(failure(() => checkBaseUrl(value, '--base-url')).exitCode).toBe(EXIT.usage);
  });

  it('keeps a path prefix of the base URL', () => {
    expect(checkBaseUrl('https://x.test/reftrack/', '--base-url')).toBe('https://x.test/reftrack');
  });

  it('takes the key from the flag before the environment, and fails with exit 3 without one', () => {
    expect(resolveApiKey('aff_flag', { REFTRACK_API_KEY: 'aff_env' })).toBe('aff_flag');
    expect(resolveApiKey(undefined, { REFTRACK_API_KEY: ' aff_env ' })).toBe('aff_env');
    const err = failure(() => resolveApiKey(undefined, {}));
    expect(err.exitCode).toBe(EXIT.auth);
    expect(err.code).toBe('missing_api_key');
  });

  it('never sends a login token to a server other than the one that issued it', () => {
    expect(requireLogin(login, 'https://track.example.com', 'login first')).toBe(login);
    const other = failure(() => requireLogin(login, 'https://evil.example.com', 'login first'));
    expect(other.code).toBe('login_server_mismatch');
    expect(other.exitCode).toBe(EXIT.auth);
    const none = failure(() => requireLogin(null, 'https://track.example.com', ERRORS.cliInitAuthRequired.message));
    expect(none.message).toBe(ERRORS.cliInitAuthRequired.message);
    expect(none.exitCode).toBe(EXIT.auth);
  });
});
