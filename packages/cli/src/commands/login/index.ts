/** `reftrack login`: a browser sign-in that hands this terminal a login token (spec 4.7, 5.7). */
import { CLI_CODES, CliError } from '../../cli-error.js';
import { resolveBaseUrl } from '../../config/resolve.js';
import { openLoginStore } from '../../config/store.js';
import type { CommonFlags, Context } from '../../context.js';
import { EXIT } from '../../exit-codes.js';
import { parseAuthStart } from '../../http/validate.js';
import { browserLikely, openBrowser } from './browser.js';
import { clampInterval, loginDeadline, pollForLogin, type LoginGrant } from './poll.js';

export interface LoginFlags extends CommonFlags {
  /** commander's `--no-browser` sets `browser: false`. */
  browser?: boolean;
}

export async function login(ctx: Context, flags: LoginFlags): Promise<void> {
  const { out } = ctx;
  // Opened first so that a config folder we cannot write fails before the person signs in.
  const store = await openLoginStore(ctx.env);
  const baseUrl = resolveBaseUrl({ flag: flags.baseUrl, env: ctx.env, login: store.get() });
  const client = ctx.client(baseUrl);

  const started = await client.call('cliAuthStart');
  const session = parseAuthStart(started.body);
  const deadline = loginDeadline(session.expires_at, started.headers.get('date'));

  // A script completing the sign-in itself (CI, tests) needs the state; a person needs the URL.
  out.event('login_started', { state: session.state, login_url: session.login_url, expires_at: session.expires_at, base_url: baseUrl, pairing_code: session.pairing_code ?? null });
  const tryBrowser = flags.browser !== false && browserLikely(ctx.env);
  const opened = tryBrowser && (await openBrowser(session.login_url));
  out.info(
    opened
      ? `Opened your browser to sign in to ${baseUrl}. If it did not open, visit:\n\n  ${session.login_url}\n`
      : `To sign in to ${baseUrl}, open this address in a browser:\n\n  ${session.login_url}\n`,
  );
  // The browser shows the same code before it signs this terminal in: a link someone else sent shows another.
  if (session.pairing_code) out.info(`Pairing code: ${session.pairing_code}\nContinue in the browser only if it shows this code.\n`);
  out.info(`Session ${session.state} expires at ${session.expires_at}.`);

  const spinner = out.spinner('Waiting for you to sign in…');
  const onInterrupt = () => {
    spinner.stop();
    out.error(new CliError({ code: CLI_CODES.interrupted, message: 'Sign-in cancelled.', exitCode: EXIT.interrupted }));
    process.exit(EXIT.interrupted);
  };
  process.once('SIGINT', onInterrupt);
  let grant: LoginGrant;
  try {
    grant = await pollForLogin({
      client,
      state: session.state,
      deadline,
      intervalMs: clampInterval(session.poll_interval_seconds),
      onRetry: ({ error, waitMs }) => {
        spinner.update(`Waiting for you to sign in… (${error.code}; retrying in ${Math.ceil(waitMs / 1000)}s)`);
        out.event('poll_retry', { code: error.code, status: error.status, wait_ms: waitMs });
      },
    });
  } finally {
    spinner.stop();
    process.removeListener('SIGINT', onInterrupt);
  }

  store.set({ token: grant.token, account: grant.account, base_url: baseUrl, logged_in_at: new Date().toISOString() });
  out.result({ logged_in: true, account: grant.account, base_url: baseUrl, state: session.state, config_path: store.path }, () => {
    const who = grant.account.name ? `${grant.account.name} <${grant.account.email}>` : grant.account.email;
    return `Logged in to ${baseUrl} as ${who}.\nThe login token is stored in ${store.path} (readable by you only).\n`;
  });
}
