/** Flags and defaults shared by the commands that authenticate with a program key (status, test-event). */
import { baseUrlNeedsLogin } from '../config/resolve.js';
import { openLoginStore, type StoredLogin } from '../config/store.js';
import type { CommonFlags, Context } from '../context.js';

export interface KeyFlags extends CommonFlags {
  apiKey?: string;
}

/**
 * The stored login, read only for its server address (the default when no flag or variable names
 * one). The login token itself is not sent: these routes take the program key.
 */
export async function loginForDefaultServer(ctx: Context, flags: CommonFlags): Promise<StoredLogin | null> {
  if (!baseUrlNeedsLogin(flags.baseUrl, ctx.env)) return null;
  return (await openLoginStore(ctx.env)).get();
}
