/** `reftrack whoami`: the stored account and the server it is logged in to. Makes no request. */
import { BRAND } from '@reftrack/contract';
import { CLI_CODES, CliError } from '../../cli-error.js';
import { openLoginStore } from '../../config/store.js';
import type { Context } from '../../context.js';
import { EXIT } from '../../exit-codes.js';

export async function whoami(ctx: Context): Promise<void> {
  const store = await openLoginStore(ctx.env);
  const login = store.get();
  if (!login) {
    throw new CliError({ code: CLI_CODES.notLoggedIn, message: 'Not logged in.', exitCode: EXIT.auth, hint: `Run \`${BRAND.cli} login\`.` });
  }
  ctx.out.result({ logged_in: true, account: login.account, base_url: login.base_url, logged_in_at: login.logged_in_at, config_path: store.path }, () => {
    const who = login.account.name ? `${login.account.name} <${login.account.email}>` : login.account.email;
    return `${who}\nServer: ${login.base_url}\nLogged in: ${login.logged_in_at}\n`;
  });
}
