/**
 * `reftrack`: the command-line tool of Reftrack. This file only wires commander to the commands;
 * each command lives in its own folder under commands/. Startup matters (`--help` should feel
 * instant), so nothing heavy is imported here: conf and open load inside the commands that use them.
 */
import { Argument, Command, CommanderError, Option } from 'commander';
import { BRAND } from '@reftrack/contract';
import { CliError, usageError } from './cli-error.js';
import { init, type InitFlags } from './commands/init/index.js';
import type { KeyFlags } from './commands/key-flags.js';
import { keysGenerate, type KeysFlags } from './commands/keys/index.js';
import { login, type LoginFlags } from './commands/login/index.js';
import { logout } from './commands/logout/index.js';
import { programs } from './commands/programs/index.js';
import { status } from './commands/status/index.js';
import { TEST_EVENT_CHOICES, testEvent } from './commands/test-event/index.js';
import { whoami } from './commands/whoami/index.js';
import { webhooksCreate, webhooksDelete, webhooksDeliveries, webhooksList, webhooksResend, webhooksRotate, webhooksTest, webhooksUpdate, type WebhooksFlags } from './commands/webhooks/index.js';
import { createContext, type CommonFlags, type Context } from './context.js';
import { EXIT, EXIT_CODE_HELP } from './exit-codes.js';
import { Output } from './output.js';
import { CLI_VERSION } from './version.js';

const cli = BRAND.cli;

const ENVIRONMENT_HELP = `Environment:
  REFTRACK_API_KEY     program key for status and test-event (safer than --api-key)
  REFTRACK_BASE_URL    server address (instead of --base-url)
  REFTRACK_CONFIG_DIR  folder of the login file (default: your user config folder, e.g. ~/.config/${cli})`;

const EXAMPLES_HELP = `Examples:
  $ ${cli} login
  $ ${cli} init --name "Acme" --domain acme.com --commission-type percent --commission-rate 20
  $ ${cli} keys generate 3
  $ REFTRACK_API_KEY=aff_... ${cli} status
  $ REFTRACK_API_KEY=aff_... ${cli} test-event chain --json`;

function unexpected(err: unknown): CliError {
  const message = err instanceof Error ? err.message : String(err);
  return new CliError({
    code: 'unexpected_error',
    message: `Unexpected failure: ${message}`,
    exitCode: EXIT.failure,
    hint: 'Run again with REFTRACK_DEBUG=1 for the stack trace, and report it if it persists.',
    cause: err,
  });
}

function report(out: Output, err: unknown): void {
  const error = err instanceof CliError ? err : unexpected(err);
  if (!(err instanceof CliError) && process.env.REFTRACK_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  out.error(error);
  process.exitCode = error.exitCode;
}

/** Runs a command with its context; every failure is printed once, in the mode the person asked for. */
function action<F extends CommonFlags, A extends unknown[]>(run: (ctx: Context, ...args: [...A, F]) => Promise<void>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const flags = command.opts<F>();
    const ctx = createContext(flags);
    try {
      await run(ctx, ...(args.slice(0, -2) as A), flags);
    } catch (err) {
      report(ctx.out, err);
    }
  };
}

const jsonOption = () => new Option('--json', 'print one JSON document on stdout (errors too)');
const baseUrlOption = () => new Option('--base-url <url>', 'server address (default: REFTRACK_BASE_URL, else the logged-in server, else http://localhost:8787)');
const apiKeyOption = () => new Option('--api-key <key>', 'program key, aff_... (default: REFTRACK_API_KEY; prefer the variable)');

export function buildProgram(jsonRequested: boolean): Command {
  const program = new Command(cli)
    .description('Reftrack from the terminal: sign in, create a program, check its integration.')
    .version(CLI_VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addHelpText('after', `\n${ENVIRONMENT_HELP}\n\n${EXIT_CODE_HELP}\n\n${EXAMPLES_HELP}\n`)
    .showHelpAfterError(`(run \`${cli} --help\` for usage)`)
    .configureOutput({
      // In JSON mode the error goes to stdout as a document (see main); no free text on stderr.
      outputError: (text, write) => {
        if (!jsonRequested) write(text);
      },
      writeErr: (text) => {
        if (!jsonRequested) process.stderr.write(text);
      },
    })
    .exitOverride();

  program
    .command('login')
    .description('sign in through the browser and store a login token for init and programs')
    .option('--no-browser', 'do not open a browser; print the sign-in address instead')
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<LoginFlags, []>((ctx, flags) => login(ctx, flags)));

  program
    .command('logout')
    .description('revoke the login token on the server that issued it and remove it from this machine')
    .addOption(jsonOption())
    .action(action<CommonFlags, []>((ctx) => logout(ctx)));

  program
    .command('whoami')
    .description('show the stored account and the server it is logged in to')
    .addOption(jsonOption())
    .action(action<CommonFlags, []>((ctx) => whoami(ctx)));

  program
    .command('init')
    .description('create a program and print the tracker tag, key instructions and SDK calls (asks for missing values in a terminal)')
    .option('--name <name>', 'program name')
    .option('--domain <domain>', 'domain of your site, e.g. acme.com')
    .option('--commission-type <type>', 'percent, fixed, recurring_percent or recurring_fixed')
    .option('--commission-rate <rate>', 'positive number: a percentage, or a fixed amount in major units')
    .option('--advertiser-id <id>', 'workspace to create it in (default: your account\'s)')
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<InitFlags, []>((ctx, flags) => init(ctx, flags)));

  program
    .command('programs')
    .description('list the programs of the logged-in account (keys masked)')
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<CommonFlags, []>((ctx, flags) => programs(ctx, flags)));

  const keys = program.command('keys').description('program keys, for a workspace owner (login token)');
  keys
    .command('generate')
    .description('generate the program key and print it once: a first key at once; a new key replacing one that was shown after you confirm')
    .addArgument(new Argument('<program-id>', `the program's id (\`${cli} programs\` lists them)`))
    .option('-y, --yes', 'replace a key that was already shown without asking (for scripts)')
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<KeysFlags, [string]>((ctx, id, flags) => keysGenerate(ctx, id, flags)));

  program
    .command('status')
    .description('show the program of a key, the key\'s rotation state and the integration checklist')
    .addOption(apiKeyOption())
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<KeyFlags, []>((ctx, flags) => status(ctx, flags)));

  program
    .command('test-event')
    .description('record a test click, lead or sale, or run the synthetic chain (exit 1 when it fails)')
    .addArgument(new Argument('<type>', 'click, lead, sale or chain').choices(TEST_EVENT_CHOICES))
    .addOption(apiKeyOption())
    .addOption(baseUrlOption())
    .addOption(jsonOption())
    .action(action<KeyFlags, [string]>((ctx, type, flags) => testEvent(ctx, type, flags)));

  const hooks = program.command('webhooks').description('outbound webhook endpoints of a workspace, for its owners (login token; docs/webhooks.md)');
  const workspaceOption = () => new Option('--workspace <id>', "workspace id (default: your first program's)");
  const sub = (name: string, description: string) => hooks.command(name).description(description).addOption(baseUrlOption()).addOption(jsonOption());
  sub('list', 'list the endpoints (never their secrets)')
    .addOption(workspaceOption())
    .action(action<WebhooksFlags, []>((ctx, flags) => webhooksList(ctx, flags)));
  sub('create', 'add an endpoint and print its signing secret once')
    .addArgument(new Argument('<url>', 'where deliveries are POSTed'))
    .option('--events <list>', 'comma-separated event types, e.g. sale.created,commission.created')
    .option('--program <id>', "only this program's events")
    .option('--partner <id>', "a partner's postback: only that partner's leads, sales and commissions")
    .option('--description <text>', 'a note')
    .addOption(workspaceOption())
    .action(action<WebhooksFlags, [string]>((ctx, url, flags) => webhooksCreate(ctx, url, flags)));
  sub('update', 'change an endpoint')
    .addArgument(new Argument('<id>', 'endpoint id'))
    .option('--url <url>', 'new address')
    .option('--events <list>', 'comma-separated event types')
    .option('--program <id>', 'a program id, or all')
    .option('--description <text>', 'a note')
    .option('--enable', 'switch it on (clears a "failing" notice)')
    .option('--disable', 'switch it off')
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksUpdate(ctx, id, flags)));
  sub('delete', 'delete an endpoint and its delivery log')
    .addArgument(new Argument('<id>', 'endpoint id'))
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksDelete(ctx, id, flags)));
  sub('rotate-secret', 'make a new signing secret and print it once; the old one signs 24 h more')
    .addArgument(new Argument('<id>', 'endpoint id'))
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksRotate(ctx, id, flags)));
  sub('test', 'send a signed webhook.test event to the endpoint')
    .addArgument(new Argument('<id>', 'endpoint id'))
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksTest(ctx, id, flags)));
  sub('deliveries', "the endpoint's delivery log, newest first")
    .addArgument(new Argument('<id>', 'endpoint id'))
    .option('--page <n>', 'page of 25')
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksDeliveries(ctx, id, flags)));
  sub('resend', 'send a delivery again, with the same webhook-id')
    .addArgument(new Argument('<delivery-id>', 'delivery id (from webhooks deliveries)'))
    .action(action<WebhooksFlags, [string]>((ctx, id, flags) => webhooksResend(ctx, id, flags)));

  return program;
}

/** Commander's own outcomes: help and version are successes, everything else is a usage error (exit 2). */
function commanderExit(err: CommanderError, out: Output): void {
  // `reftrack help <cmd>` ends in 'commander.help' with exit code 0; a missing command in the same code with 1.
  if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0)) {
    process.exitCode = EXIT.ok;
    return;
  }
  const message = err.code === 'commander.help' ? 'No command given.' : err.message.replace(/^error:\s*/, '');
  if (out.json) out.error(usageError(message, `Run \`${cli} --help\` for usage.`));
  process.exitCode = EXIT.usage;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const jsonRequested = argv.slice(2).includes('--json');
  const out = new Output(jsonRequested);
  // `reftrack programs | head -1` closes the pipe early; that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  });
  try {
    await buildProgram(jsonRequested).parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) commanderExit(err, out);
    else report(out, err);
  }
}

void main().catch((err: unknown) => {
  process.stderr.write(`${cli}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = EXIT.failure;
});
