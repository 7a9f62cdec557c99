/** `reftrack init`: creates a program for the logged-in account and prints how to wire it up. */
import { ERRORS } from '@reftrack/contract';
import { requireLogin, resolveBaseUrl } from '../../config/resolve.js';
import { openLoginStore } from '../../config/store.js';
import type { CommonFlags, Context } from '../../context.js';
import { parseInit } from '../../http/validate.js';
import { sdkSnippet, trackerSnippet, verifyCommand } from './next-steps.js';
import { promptMissing } from './prompt.js';
import { checkComplete, checkGiven, missingKeys, validateInit, type InitInput } from './validate.js';

export interface InitFlags extends CommonFlags, InitInput {}

export async function init(ctx: Context, flags: InitFlags): Promise<void> {
  let input: InitInput = { name: flags.name, domain: flags.domain, commissionType: flags.commissionType, commissionRate: flags.commissionRate, advertiserId: flags.advertiserId };
  // Usage mistakes first (exit 2), whatever the login state: a script learns about its flags at once.
  checkGiven(input);
  const interactive = Boolean(ctx.stdin.isTTY);
  if (!interactive) checkComplete(input);

  const store = await openLoginStore(ctx.env);
  const stored = store.get();
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: stored });
  // Before any prompt: answering four questions only to learn one must log in wastes time.
  const login = requireLogin(stored, baseUrl, ERRORS.cliInitAuthRequired.message);

  if (interactive && missingKeys(input).length > 0) input = await promptMissing(input, ctx.stdin);
  const body = validateInit(input);

  const res = await ctx.client(baseUrl).call('cliInit', { token: login.token, body });
  const data = parseInit(res.body);
  const tracker = trackerSnippet(baseUrl, data.program.id);
  const sdk = sdkSnippet(baseUrl);
  const verify = verifyCommand(baseUrl);

  const doc = {
    program: data.program,
    api_key_instructions: data.api_key_instructions,
    next_steps: data.next_steps,
    tracker_snippet: tracker,
    sdk_snippet: sdk,
    verify_command: verify,
    ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}),
  };
  ctx.out.result(doc, () => {
    const p = data.program;
    const lines = [
      `Created program ${p.id} "${p.name}" for ${p.domain} (${p.commission_type}, rate ${p.commission_rate}).`,
      '',
      '1. Add the tracker to every page of your site, in <head>:',
      '',
      `   ${tracker}`,
      '',
      '2. Generate the program key (creation does not show it):',
      '',
      ...data.api_key_instructions.split('\n').map((l) => `   ${l}`),
      '',
      '3. Report leads and sales from your server with the SDK (npm install @reftrack/sdk):',
      '',
      ...sdk.split('\n').map((l) => (l === '' ? '' : `   ${l}`)),
      '',
      '4. Check the whole chain end to end:',
      '',
      `   ${verify}`,
    ];
    return lines.join('\n') + '\n';
  });
}
