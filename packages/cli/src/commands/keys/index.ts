/**
 * `reftrack keys generate <program-id>`: the program key from the terminal, for a workspace owner
 * signed in with `reftrack login` (the dashboard's "Generate key" / "Regenerate key").
 *
 * A key made with its program was never shown: the first key is generated at once. A key that was
 * shown may be deployed, and a new one stops it at once, so that replacement asks for the program
 * id first (as the dashboard asks), or takes --yes; the server also refuses it without
 * `replace: true`, so a race with the dashboard cannot replace a key nobody confirmed.
 */
import { BRAND, ERRORS } from '@reftrack/contract';
import { CLI_CODES, CliError, usageError } from '../../cli-error.js';
import { requireLogin, resolveBaseUrl } from '../../config/resolve.js';
import { openLoginStore } from '../../config/store.js';
import type { CommonFlags, Context } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import { parseProgramKey, parsePrograms } from '../../http/validate.js';
import { confirmProgramId } from './confirm.js';

export interface KeysFlags extends CommonFlags {
  yes?: boolean;
}

function parseProgramId(value: string): number {
  if (!/^\d{1,15}$/.test(value.trim()) || Number(value) < 1) {
    throw usageError(`The program id must be a positive integer, got "${value}".`, `Run \`${BRAND.cli} programs\` to list your programs and their ids.`);
  }
  return Number(value);
}

export async function keysGenerate(ctx: Context, programIdArg: string, flags: KeysFlags): Promise<void> {
  const programId = parseProgramId(programIdArg);
  const store = await openLoginStore(ctx.env);
  const stored = store.get();
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: stored });
  const login = requireLogin(stored, baseUrl, ERRORS.cliInitAuthRequired.message);
  const client = ctx.client(baseUrl);

  const program = parsePrograms((await client.call('cliPrograms', { token: login.token })).body).find((p) => p.id === programId);
  if (!program) {
    throw new CliError({
      code: CLI_CODES.programNotFound,
      message: `Program ${programId} is not among the programs of ${login.account.email} on ${baseUrl}.`,
      exitCode: EXIT.failure,
      hint: `Run \`${BRAND.cli} programs\` to list them.`,
    });
  }
  // null: never shown. A server that does not say (undefined) is treated as shown: ask rather than break a live key.
  const shown = program.api_key_revealed_at !== null;
  if (shown && !flags.yes) {
    const warning = `Program ${program.id} "${program.name}" already has a key that was shown (${program.api_token_masked ?? 'masked'}). A new key stops it at once: every call made with it answers 401 until you deploy the new key.`;
    if (!ctx.stdin.isTTY || ctx.out.json) {
      throw usageError(`${warning} Nothing was changed.`, 'Run it in a terminal to confirm, or pass --yes to replace the key without asking.');
    }
    await confirmProgramId(`${warning}\n`, program.id, ctx.stdin);
  }

  const res = await client.call('cliProgramKey', { token: login.token, params: { id: programId }, body: { replace: shown } });
  const key = parseProgramKey(res.body);
  const check = `${BRAND.cli} status --base-url ${baseUrl}`;
  ctx.out.result({ ...key, ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}) }, () =>
    [
      `${key.replaced ? 'New key' : 'Key'} for program ${program.id} "${program.name}", shown only once:`,
      '',
      `  ${key.api_key}`,
      '',
      key.note,
      `Store it on your server as REFTRACK_API_KEY (never in browser code), then check it: REFTRACK_API_KEY=<key> ${check}`,
      '',
    ].join('\n'),
  );
}
