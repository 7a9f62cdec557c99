/** The confirmation before a shown key is replaced: the person types the program id, as a guard against a slip of the finger. */
import { CLI_CODES, CliError } from '../../cli-error.js';
import { EXIT } from '../../exit-codes.js';

export async function confirmProgramId(
  question: string,
  programId: number,
  stdin: NodeJS.ReadableStream,
  // The question goes to stderr so that stdout keeps only the result (`--json` stays parseable).
  output: NodeJS.WritableStream = process.stderr,
): Promise<void> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: stdin, output, terminal: Boolean((stdin as { isTTY?: boolean }).isTTY) });
  // Ctrl-C closes the interface, which ends the iterator: a cancel, not a hang.
  rl.on('SIGINT', () => rl.close());
  try {
    output.write(question);
    rl.setPrompt(`Type the program id (${programId}) to replace the key, anything else to cancel: `);
    rl.prompt();
    const next = await rl[Symbol.asyncIterator]().next();
    if (next.done) throw new CliError({ code: CLI_CODES.interrupted, message: 'Cancelled; the key was not changed.', exitCode: EXIT.interrupted });
    if (String(next.value).trim() !== String(programId)) {
      throw new CliError({ code: CLI_CODES.cancelled, message: 'Cancelled; the key was not changed.', exitCode: EXIT.failure, hint: 'Type the program id exactly to confirm, or pass --yes in a script.' });
    }
  } finally {
    rl.close();
  }
}
