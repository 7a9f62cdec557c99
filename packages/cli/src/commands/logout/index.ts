/** `reftrack logout`: forgets the stored login token on this machine. */
import { openLoginStore } from '../../config/store.js';
import type { Context } from '../../context.js';

export async function logout(ctx: Context): Promise<void> {
  const store = await openLoginStore(ctx.env);
  const login = store.get();
  const removed = store.clear();
  ctx.out.result({ logged_out: removed, base_url: login?.base_url ?? null, config_path: store.path }, () =>
    removed ? `Logged out of ${login?.base_url ?? 'the server'}; the login token was removed from ${store.path}.\n` : 'Not logged in; nothing to remove.\n',
  );
}
