import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Reftrack, SDK_VERSION } from '../src/index.js';

const saved = { key: process.env.REFTRACK_API_KEY, url: process.env.REFTRACK_BASE_URL };
beforeEach(() => {
  delete process.env.REFTRACK_API_KEY;
  delete process.env.REFTRACK_BASE_URL;
});
afterEach(() => {
  for (const [name, value] of [['REFTRACK_API_KEY', saved.key], ['REFTRACK_BASE_URL', saved.url]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('construction', () => {
  it('has the documented defaults', () => {
    const client = new Reftrack();
    expect(client).toMatchObject({ baseUrl: 'http://localhost:8787', timeoutMs: 10_000, maxRetries: 2 });
  });

  it('reads REFTRACK_BASE_URL and drops a trailing slash', () => {
    process.env.REFTRACK_BASE_URL = 'https://track.example.com/';
    expect(new Reftrack().baseUrl).toBe('https://track.example.com');
    expect(new Reftrack({ baseUrl: 'http://127.0.0.1:9/' }).baseUrl).toBe('http://127.0.0.1:9');
  });

  it('names a bad REFTRACK_BASE_URL', () => {
    process.env.REFTRACK_BASE_URL = 'not a url';
    expect(() => new Reftrack()).toThrow(/REFTRACK_BASE_URL/);
  });

  it('does not show the key when the client is printed', () => {
    const client = new Reftrack({ apiKey: 'aff_secret_value_1234567890' });
    expect(JSON.stringify(client)).not.toContain('aff_secret');
  });

  it.each([
    [{ timeout: 5 }, /unknown option "timeout"/],
    [{ apiKey: '' }, /apiKey must be a non-empty string/],
    [{ apiKey: 'aff_ with space' }, /apiKey/],
    [{ apiKey: 42 }, /apiKey/],
    [{ baseUrl: 'ftp://x' }, /http or https/],
    [{ baseUrl: 'http://x/?a=1' }, /query/],
    [{ baseUrl: 'nope' }, /not a valid URL/],
    [{ timeoutMs: 0 }, /timeoutMs/],
    [{ timeoutMs: 1.5 }, /timeoutMs/],
    [{ timeoutMs: '100' }, /timeoutMs/],
    [{ maxRetries: -1 }, /maxRetries/],
    [{ maxRetries: 11 }, /maxRetries/],
    [{ onWarning: 'log' }, /onWarning must be a function/],
    [{ dispatcher: {} }, /dispatcher/],
  ])('rejects %j', (options, message) => {
    expect(() => new Reftrack(options as never)).toThrow(TypeError);
    expect(() => new Reftrack(options as never)).toThrow(message);
  });

  it('rejects options that are not an object', () => {
    expect(() => new Reftrack('aff_key' as never)).toThrow(/must be an object/);
  });

  it('rejects a malformed REFTRACK_API_KEY', () => {
    process.env.REFTRACK_API_KEY = 'two words';
    expect(() => new Reftrack()).toThrow(/REFTRACK_API_KEY/);
  });
});

describe('call arguments', () => {
  const client = new Reftrack({ apiKey: 'aff_key', baseUrl: 'http://127.0.0.1:9' });

  it('rejects a misspelt field instead of dropping it', async () => {
    await expect(client.trackSale({ invoiceId: 'in_1', amountCents: 100, customerExternalId: 'u' } as never)).rejects.toThrow(/unknown field "amountCents"/);
    await expect(client.trackLead({ click_id: 'clk' } as never)).rejects.toThrow(/unknown field "click_id"/);
    await expect(client.trackRefund({ invoiceId: 'in_1', reasons: 'refund' } as never)).rejects.toThrow(/unknown field "reasons"/);
  });

  it('rejects bad per-call options', async () => {
    await expect(client.readiness({ retries: 1 } as never)).rejects.toThrow(/unknown option "retries"/);
    await expect(client.trackLead({ clickId: 'c' }, { ignoreAlreadyLead: 'yes' } as never)).rejects.toThrow(/ignoreAlreadyLead/);
    await expect(client.sendTestSale({ timeoutMs: -5 })).rejects.toThrow(/timeoutMs/);
  });

  it('rejects an invalid Date', async () => {
    await expect(client.trackSale({ invoiceId: 'in_1', amount: 1, clickId: 'c', occurredAt: new Date('nope') })).rejects.toThrow(/occurredAt/);
  });
});

describe('version', () => {
  it('matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
