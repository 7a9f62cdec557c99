/** Asks for the fields the flags left out. Only called when stdin is a terminal. */
import { COMMISSION_TYPES } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../../cli-error.js';
import { EXIT } from '../../exit-codes.js';
import { checkCommissionRate, checkCommissionType, missingKeys, type InitInput } from './validate.js';

interface Question {
  text: string;
  fallback?: string;
  check: (value: string) => string | null;
}

const required = (what: string) => (value: string) => (value.trim() === '' ? `${what} is required.` : null);

const QUESTIONS: Record<ReturnType<typeof missingKeys>[number], Question> = {
  name: { text: 'Program name', check: required('A name') },
  domain: { text: 'Domain of your site (e.g. example.com)', check: required('A domain') },
  commissionType: { text: `Commission type (${COMMISSION_TYPES.join(', ')})`, fallback: COMMISSION_TYPES[0], check: checkCommissionType },
  commissionRate: { text: 'Commission rate (percent, or a fixed amount in major units)', check: checkCommissionRate },
};

export async function promptMissing(
  input: InitInput,
  stdin: NodeJS.ReadableStream,
  // Prompts go to stderr so that stdout keeps only the result (`--json` stays parseable).
  output: NodeJS.WritableStream = process.stderr,
): Promise<InitInput> {
  const missing = missingKeys(input);
  if (missing.length === 0) return input;
  // Loaded here: only an interactive init needs readline, and every other run starts faster without it.
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: stdin, output, terminal: Boolean((stdin as { isTTY?: boolean }).isTTY) });
  // Ctrl-C closes the interface, which ends the line iterator below: a cancel, not a hang.
  rl.on('SIGINT', () => rl.close());
  // An iterator buffers lines, so answers pasted (or typed ahead) several at once are all kept.
  const lines = rl[Symbol.asyncIterator]();
  const out: InitInput = { ...input };
  try {
    for (const key of missing) {
      const q = QUESTIONS[key];
      for (;;) {
        rl.setPrompt(`${q.text}${q.fallback ? ` [${q.fallback}]` : ''}: `);
        rl.prompt();
        const next = await lines.next();
        if (next.done) throw new CliError({ code: CLI_CODES.interrupted, message: 'Cancelled; no program was created.', exitCode: EXIT.interrupted });
        const answer = String(next.value).trim();
        const value = answer === '' && q.fallback ? q.fallback : answer;
        const problem = q.check(value);
        if (problem === null) {
          out[key] = value;
          break;
        }
        output.write(`  ${problem}\n`);
      }
    }
  } finally {
    rl.close();
  }
  return out;
}
