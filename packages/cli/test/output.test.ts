import { PassThrough } from 'node:stream';
import { ERRORS, formatMessage } from '@reftrack/contract';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/cli-error.js';
import { promptMissing } from '../src/commands/init/prompt.js';
import { describeDetail, renderSteps } from '../src/commands/test-event/index.js';
import { EXIT } from '../src/exit-codes.js';
import { readWarnings } from '../src/http/client.js';
import { Output, type Stream } from '../src/output.js';

function sink(isTTY = false): Stream & { text: string } {
  const s = {
    text: '',
    isTTY,
    write(chunk: string) {
      s.text += chunk;
      return true;
    },
  };
  return s;
}

describe('output modes', () => {
  it('human mode: result on stdout, errors and warnings on stderr', () => {
    const out = sink();
    const err = sink();
    const o = new Output(false, out, err);
    o.result({ a: 1 }, () => 'hello\n');
    o.warnings([{ code: 'api_key_rotation_required', message: 'stops soon', hint: 'rotate' }]);
    o.error(new CliError({ code: 'x', message: 'boom', exitCode: EXIT.failure }));
    expect(out.text).toBe('hello\n');
    expect(err.text).toBe('Warning: api_key_rotation_required: stops soon\n  rotate\nError: x: boom\n');
  });

  it('JSON mode: one document on stdout, JSON event lines on stderr, no free text', () => {
    const out = sink();
    const err = sink();
    const o = new Output(true, out, err);
    o.info('not shown');
    o.event('login_started', { state: 's' });
    o.warnings([{ code: 'api_key_rotation_required', message: 'stops soon' }]);
    o.result({ a: 1 }, () => 'ignored');
    expect(JSON.parse(out.text)).toEqual({ a: 1 });
    expect(err.text.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      { event: 'login_started', state: 's' },
      { event: 'warning', code: 'api_key_rotation_required', message: 'stops soon' },
    ]);
  });

  it('prints the same warning once per run', () => {
    const err = sink();
    const o = new Output(false, sink(), err);
    const w = { code: 'api_key_rotation_required' as const, message: 'stops soon' };
    o.warnings([w]);
    o.warnings([w]);
    expect(err.text.match(/Warning/g)).toHaveLength(1);
  });

  it('animates the spinner only on a terminal and never in JSON mode', () => {
    const tty = sink(true);
    const s = new Output(false, sink(), tty).spinner('Waiting');
    s.stop();
    expect(tty.text).toContain('Waiting');
    for (const [json, isTTY] of [
      [false, false],
      [true, true],
    ] as const) {
      const err = sink(isTTY);
      new Output(json, sink(), err).spinner('Waiting').stop();
      expect(err.text).toBe('');
    }
  });
});

describe('rotation warnings', () => {
  it('reads the body warnings array', () => {
    const w = { code: 'api_key_rotation_required', message: 'm', hint: 'h', rotate_by: '2030-01-01T00:00:00Z', docs_url: 'http://x' };
    expect(readWarnings({ success: true, data: {}, warnings: [w] }, new Headers(), true)).toEqual([w]);
  });

  it('builds one from Deprecation and Sunset when the body has none', () => {
    const headers = new Headers({ Deprecation: '@1700000000', Sunset: 'Tue, 01 Jan 2030 00:00:00 GMT' });
    const [w] = readWarnings({ success: true }, headers, true);
    expect(w!.message).toBe(formatMessage(ERRORS.keyRotationWarning.message, { deadline: '2030-01-01T00:00:00.000Z' }));
    expect(readWarnings({}, new Headers(), true)).toEqual([]);
  });
});

describe('chain steps', () => {
  it('shows each step with its result, status, timing and scalar details', () => {
    const text = renderSteps([
      { step: 'click', ok: true, status: 200, duration_ms: 12.6, detail: { click_id: 'clk_1', nested: { a: 1 } } },
      { step: 'sale', ok: false, status: 400, duration_ms: 3, detail: { message: 'no attribution' } },
    ]);
    expect(text).toBe('  PASS  click  HTTP 200     13 ms  click_id=clk_1\n  FAIL  sale   HTTP 400      3 ms  message=no attribution');
    expect(describeDetail({ a: null, b: [1] })).toBe('a=null');
  });
});

describe('init prompts', () => {
  it('asks only for what is missing, re-asks after an invalid answer, and defaults the type', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let asked = '';
    output.on('data', (c: Buffer) => (asked += c.toString()));
    const answers = promptMissing({ name: 'Acme' }, input, output);
    // Blank domain is refused, blank type takes the default, "-1" is refused as a rate.
    for (const line of ['', 'acme.test', '', '-1', '12.5']) input.write(`${line}\n`);
    await expect(answers).resolves.toEqual({ name: 'Acme', domain: 'acme.test', commissionType: 'percent', commissionRate: '12.5' });
    expect(asked).not.toContain('Program name');
    expect(asked).toContain('A domain is required.');
    expect(asked).toContain(ERRORS.cliInitCommissionRate.message);
  });

  it('ending the input cancels with exit 130 and creates nothing', async () => {
    const input = new PassThrough();
    const answers = promptMissing({}, input, new PassThrough());
    input.end();
    const err = await answers.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.interrupted);
  });
});
