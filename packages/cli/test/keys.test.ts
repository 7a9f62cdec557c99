/** `reftrack keys generate`: the confirmation before a shown key is replaced, as a person types it. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/cli-error.js';
import { confirmProgramId } from '../src/commands/keys/confirm.js';

function answering(text: string | null) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (c: Buffer) => (shown += c.toString('utf8')));
  if (text === null) input.end();
  else input.write(`${text}\n`);
  return { input, output, shown: () => shown };
}

describe('confirming a key replacement by typing the program id (as the dashboard asks)', () => {
  it('goes on when the person types the program id', async () => {
    const io = answering('42');
    await expect(confirmProgramId('The current key stops at once.\n', 42, io.input, io.output)).resolves.toBeUndefined();
    expect(io.shown()).toContain('The current key stops at once.');
    expect(io.shown()).toContain('Type the program id (42) to replace the key, anything else to cancel: ');
  });

  it('cancels on anything else, changing nothing (exit 1, code cancelled)', async () => {
    for (const answer of ['', 'yes', '4', '42x']) {
      const io = answering(answer);
      const err = await confirmProgramId('q\n', 42, io.input, io.output).catch((e: unknown) => e);
      expect(err, answer).toBeInstanceOf(CliError);
      expect(err).toMatchObject({ code: 'cancelled', exitCode: 1, message: 'Cancelled; the key was not changed.' });
    }
  });

  it('cancels when the input ends (Ctrl-D), exit 130', async () => {
    const io = answering(null);
    await expect(confirmProgramId('q\n', 42, io.input, io.output)).rejects.toMatchObject({ code: 'interrupted', exitCode: 130 });
  });
});
