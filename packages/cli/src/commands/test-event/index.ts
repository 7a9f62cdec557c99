/**
 * `reftrack test-event click|lead|sale` records one test event; `reftrack test-event chain` runs
 * the server's synthetic click → lead → sale verification and fails (exit 1) when it did not pass.
 */
import { BRAND, TEST_EVENT_TYPES, type ChainStep } from '@reftrack/contract';
import { CLI_CODES, CliError, usageError } from '../../cli-error.js';
import { resolveApiKey, resolveBaseUrl } from '../../config/resolve.js';
import type { Context } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import type { CallResult } from '../../http/client.js';
import { parseChain, parseTestEvent } from '../../http/validate.js';
import { loginForDefaultServer, type KeyFlags } from '../key-flags.js';

export const TEST_EVENT_CHOICES = [...TEST_EVENT_TYPES, 'chain'] as const;
export type TestEventChoice = (typeof TEST_EVENT_CHOICES)[number];

// A chain is three writes and their checks on the server; give it more room than a single call.
const CHAIN_TIMEOUT_MS = 60_000;

/** `key=value` pairs of a step's scalar details, e.g. `click_id=clk_… status=lead`. */
export function describeDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, v]) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

export function renderSteps(steps: ChainStep[]): string {
  const width = Math.max(4, ...steps.map((s) => s.step.length));
  return steps
    .map((s) => {
      const detail = describeDetail(s.detail);
      return `  ${s.ok ? 'PASS' : 'FAIL'}  ${s.step.padEnd(width)}  HTTP ${s.status}  ${String(Math.round(s.duration_ms)).padStart(5)} ms${detail ? `  ${detail}` : ''}`;
    })
    .join('\n');
}

export async function testEvent(ctx: Context, type: string, flags: KeyFlags): Promise<void> {
  if (!(TEST_EVENT_CHOICES as readonly string[]).includes(type)) {
    throw usageError(`Unknown test event "${type}".`, `Use one of: ${TEST_EVENT_CHOICES.join(', ')}.`);
  }
  const apiKey = resolveApiKey(flags.apiKey, ctx.env);
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: await loginForDefaultServer(ctx, flags) });
  const client = ctx.client(baseUrl);

  if (type !== 'chain') {
    const res = await client.call('cliTestEvent', { token: apiKey, body: { event_type: type } });
    const data = parseTestEvent(res.body);
    ctx.out.result({ ...data, ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}) }, () => {
      const extra = [data.click_id && `click_id ${data.click_id}`, data.transaction_id && `transaction_id ${data.transaction_id}`].filter(Boolean).join(', ');
      return `Recorded a test ${data.event_type} (event ${data.event_id}${extra ? `, ${extra}` : ''}). Test events never appear in listings and pay no commission.\n`;
    });
    return;
  }

  const spinner = ctx.out.spinner('Running the synthetic click → lead → sale chain…');
  let res: CallResult;
  try {
    res = await client.call('cliTestEvent', { token: apiKey, body: { type: 'chain' }, timeoutMs: CHAIN_TIMEOUT_MS });
  } finally {
    spinner.stop();
  }
  const data = parseChain(res.body);
  // Failing steps decide, not only the server's verdict: a "passed" chain with a failed step is not trusted.
  const passed = data.passed && data.steps.length > 0 && data.steps.every((s) => s.ok);
  ctx.out.result({ ...data, ...(res.warnings.length > 0 ? { warnings: res.warnings } : {}) }, () => {
    const total = data.steps.reduce((sum, s) => sum + s.duration_ms, 0);
    return [
      `Synthetic chain ${data.chain_id}`,
      renderSteps(data.steps),
      `${passed ? 'PASSED' : 'FAILED'} in ${Math.round(total)} ms; ${data.chains_remaining_this_hour} chain(s) left this hour.`,
      '',
    ].join('\n');
  });
  if (!passed) {
    const failed = data.steps.find((s) => !s.ok);
    throw new CliError({
      code: CLI_CODES.chainFailed,
      message: failed ? `The synthetic chain failed at the ${failed.step} step (HTTP ${failed.status}).` : 'The synthetic chain did not pass.',
      exitCode: EXIT.failure,
      hint: `Run \`${BRAND.cli} status\` for the integration checklist; the failed step's detail says what the server rejected.`,
      // The chain document is already on stdout; in JSON mode that stays the only document.
      resultPrinted: true,
    });
  }
}
