import { describe, expect, it } from 'vitest';
import { ERRORS, formatMessage, STATUS_NAMES, docsUrl, ERROR_CODES, ERROR_CODE_DESCRIPTIONS } from '../src/index.js';

describe('7.1 envelopes', () => {
  it('names every status the catalogue uses', () => {
    for (const spec of Object.values(ERRORS)) {
      if (spec.status >= 400) expect(STATUS_NAMES[spec.status], spec.message).toBeTruthy();
    }
  });
  it('typed errors always carry a code', () => {
    for (const spec of Object.values(ERRORS)) if (spec.envelope === 'typed') expect(spec.code).toBeTruthy();
  });
  it('describes every code on the reference page', () => {
    for (const code of Object.values(ERROR_CODES)) expect(ERROR_CODE_DESCRIPTIONS[code]).toBeTruthy();
  });
});

describe('7.4 and 7.6 templates', () => {
  it('fills the lead status template', () => {
    expect(formatMessage(ERRORS.leadStatus.message, { status: 'lead' })).toBe('Customer status cannot be updated to lead. Current status: lead');
  });
  it('fills the CLI request id', () => {
    expect(formatMessage(ERRORS.cliStatusFailed.message, { request_id: 'r1' })).toBe('Failed to get status (request_id: r1)');
  });
  it('uses the brand in CLI messages', () => {
    expect(ERRORS.cliInitAuthRequired.message).toBe('Authentication required — run `reftrack login` first');
  });
});

describe('docs_url', () => {
  it('builds the anchor address', () => {
    expect(docsUrl('http://x.test/', 'rate_limited')).toBe('http://x.test/docs/errors#rate_limited');
  });
});
