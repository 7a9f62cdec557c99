import { ERRORS, formatMessage } from '@reftrack/contract';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/cli-error.js';
import { EXIT, EXIT_CODE_HELP, exitCodeForStatus } from '../src/exit-codes.js';
import { errorFromResponse, fallbackCode, parseRetryAfter, readServerError, routeKind, type CliRouteName } from '../src/http/errors.js';
import { errorDocument, renderError } from '../src/output.js';

const BASE = 'http://127.0.0.1:8787';
const platform = (status: number, message: string, details: Record<string, unknown> = {}, code?: string) => ({
  data: null,
  error: { status, name: 'X', message, details, ...(code ? { code } : {}) },
});
const typed = (code: string, message: string, extra: Record<string, unknown> = {}) => ({ error: { code, message, ...extra } });

function fromResponse(route: CliRouteName, status: number, body: unknown, headers: Record<string, string> = {}): CliError {
  return errorFromResponse({ route, status, body, headers: new Headers(headers), baseUrl: BASE });
}

describe('reading the two envelopes', () => {
  it('reads the platform envelope, with request_id and ACCOUNT_BLOCKED from details', () => {
    expect(readServerError(platform(500, 'Failed to get status (request_id: r-1)', { request_id: 'r-1' }))).toMatchObject({ code: null, message: 'Failed to get status (request_id: r-1)', requestId: 'r-1' });
    expect(readServerError(platform(403, ERRORS.cliAccountBlocked.message, { code: 'ACCOUNT_BLOCKED' })).code).toBe('ACCOUNT_BLOCKED');
  });

  it('reads the typed envelope with hint and retry_after_seconds', () => {
    expect(readServerError(typed('rate_limited', 'Too many', { status: 429, retry_after_seconds: 12 }))).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 12 });
    expect(readServerError(typed('api_key_rotation_required', 'retired', { hint: 'regenerate' })).hint).toBe('regenerate');
  });

  it('survives bodies that are not an envelope', () => {
    for (const body of [null, 'Bad Gateway', [], { error: 'oops' }, { error: { message: 5 } }]) {
      expect(readServerError(body)).toEqual({ code: null, message: null, hint: null, requestId: null, retryAfterSeconds: null });
    }
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('30')).toBe(30);
    expect(parseRetryAfter(new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(30);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe('exit codes', () => {
  it('maps statuses: 401/403 → 3, 429 → 4, others → 1', () => {
    expect(exitCodeForStatus(401)).toBe(EXIT.auth);
    expect(exitCodeForStatus(403)).toBe(EXIT.auth);
    expect(exitCodeForStatus(429)).toBe(EXIT.rateLimited);
    for (const s of [400, 404, 409, 410, 500, 503]) expect(exitCodeForStatus(s)).toBe(EXIT.failure);
  });

  it('lets the code refine the status: rate_limited is 4 and a retired key 3 whatever the status', () => {
    expect(fromResponse('cliTestEvent', 429, typed('rate_limited', ERRORS.cliChainCap.message, { status: 429 })).exitCode).toBe(EXIT.rateLimited);
    expect(fromResponse('cliStatus', 401, typed('api_key_rotation_required', 'retired')).exitCode).toBe(EXIT.auth);
  });

  it('documents every exit code in the help text', () => {
    for (const code of [0, 1, 2, 3, 4]) expect(EXIT_CODE_HELP).toMatch(new RegExp(`^\\s+${code}\\s`, 'm'));
  });

  it('gives a code to errors the server sent without one', () => {
    expect(fallbackCode(400)).toBe('invalid_request');
    expect(fallbackCode(401)).toBe('unauthorized');
    expect(fallbackCode(403)).toBe('forbidden');
    expect(fallbackCode(404)).toBe('not_found');
    expect(fallbackCode(502)).toBe('internal_error');
  });
});

describe('hints: code first, then message, then status and route kind', () => {
  it('knows which credential each CLI route takes', () => {
    expect(routeKind('cliInit')).toBe('login_token');
    expect(routeKind('cliPrograms')).toBe('login_token');
    expect(routeKind('cliStatus')).toBe('program_key');
    expect(routeKind('cliTestEvent')).toBe('program_key');
    expect(routeKind('cliAuthPoll')).toBe('login_session');
  });

  it('a 401 on init or programs says to log in again, not to touch the key', () => {
    for (const [route, message] of [
      ['cliInit', ERRORS.cliInitInvalidToken.message],
      ['cliPrograms', ERRORS.cliProgramsInvalidToken.message],
    ] as const) {
      const err = fromResponse(route, 401, platform(401, message));
      expect(err.exitCode).toBe(EXIT.auth);
      expect(err.message).toBe(message);
      expect(err.hint).toMatch(/reftrack login/);
      expect(err.hint).toMatch(/program key does not fix/);
    }
  });

  it('a 401 on status or test-event is a program-key problem', () => {
    for (const route of ['cliStatus', 'cliTestEvent'] as const) {
      const err = fromResponse(route, 401, platform(401, ERRORS.cliKeyInvalid.message));
      expect(err.exitCode).toBe(EXIT.auth);
      expect(err.hint).toMatch(/--api-key or REFTRACK_API_KEY/);
      expect(err.hint).toMatch(/Logging in again does not fix/);
    }
  });

  it('the code wins over the status: a retired key shows the server hint, else the contract one', () => {
    expect(fromResponse('cliStatus', 401, typed('api_key_rotation_required', 'retired', { hint: 'Ask the owner.' })).hint).toBe('Ask the owner.');
    expect(fromResponse('cliStatus', 401, typed('api_key_rotation_required', 'retired')).hint).toBe(ERRORS.keyRotationRequired.hint);
  });

  it('rate limits say how long to wait; the chain cap says so too', () => {
    const plain = fromResponse('cliStatus', 429, typed('rate_limited', 'Too many requests. Retry after 7 seconds.', { status: 429 }), { 'Retry-After': '7' });
    expect(plain.retryAfterSeconds).toBe(7);
    expect(plain.hint).toBe('Wait 7 seconds, then retry.');
    const cap = fromResponse('cliTestEvent', 429, typed('rate_limited', ERRORS.cliChainCap.message, { status: 429, retry_after_seconds: 900 }));
    expect(cap.retryAfterSeconds).toBe(900);
    expect(cap.hint).toMatch(/per program per hour/);
    expect(cap.hint).toMatch(/900 seconds/);
  });

  it('matches the server message when there is no code', () => {
    expect(fromResponse('cliAuthPoll', 400, platform(400, ERRORS.cliPollConsumed.message)).hint).toMatch(/already completed/);
    expect(fromResponse('cliInit', 403, platform(403, ERRORS.cliInitAdvertiserMismatch.message)).hint).toMatch(/--advertiser-id/);
    const failed = fromResponse('cliInit', 500, platform(500, formatMessage(ERRORS.cliInitFailed.message, { request_id: 'req-9' }), { request_id: 'req-9' }));
    expect(failed.hint).toMatch(/reftrack programs` before retrying/);
    expect(failed.requestId).toBe('req-9');
    expect(failed.exitCode).toBe(EXIT.failure);
  });

  it('a 404 Not found names the missing route and the server', () => {
    const err = fromResponse('cliStatus', 404, platform(404, ERRORS.routeNotFound.message));
    expect(err.hint).toContain('/api/v1/cli/status');
    expect(err.hint).toContain(BASE);
  });

  it('a 500 without an envelope still reports the status, a code and the header request id', () => {
    const err = fromResponse('cliStatus', 502, '<html>Bad Gateway</html>', { 'X-Request-ID': 'hdr-1' });
    expect(err.code).toBe('internal_error');
    expect(err.message).toMatch(/HTTP 502/);
    expect(err.requestId).toBe('hdr-1');
    expect(err.hint).toMatch(/hdr-1/);
  });
});

describe('rendering', () => {
  const err = new CliError({ code: 'unauthorized', message: 'Invalid API key.', status: 401, exitCode: EXIT.auth, hint: 'Fix the key.', requestId: 'r-2' });

  it('puts the code first, then the message, then the hint', () => {
    const text = renderError(err);
    expect(text.indexOf('unauthorized')).toBeLessThan(text.indexOf('Invalid API key.'));
    expect(text.indexOf('Invalid API key.')).toBeLessThan(text.indexOf('Fix the key.'));
    expect(text).toBe('Error: unauthorized (HTTP 401): Invalid API key.\nHint: Fix the key.\nRequest id: r-2\n');
  });

  it('JSON errors carry code, message, status and exit_code', () => {
    expect(errorDocument(err)).toEqual({
      error: { code: 'unauthorized', message: 'Invalid API key.', status: 401, exit_code: 3, hint: 'Fix the key.', request_id: 'r-2', retry_after_seconds: null },
    });
  });
});
