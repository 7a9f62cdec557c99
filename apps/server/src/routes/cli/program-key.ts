/**
 * POST /api/v1/cli/programs/:id/key — `reftrack keys generate`: the dashboard's key route for the
 * CLI login token (design; 4.8 leaves the key route's form open). Owner only, refused exactly like
 * the dashboard route (src/auth/workspace-access.ts): 404 for a program outside the account's
 * workspaces, 403 for a member who is not an owner.
 *
 * A key that was already shown is replaced only with `replace: true` (the CLI asks first, like the
 * dashboard's confirmation): a script that means to fetch a first key never takes a live
 * integration down by accident.
 */
import type { Context } from 'koa';
import { ERRORS, type CliProgramKeyResponse } from '@reftrack/contract';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { authenticateLoginToken, LOGIN_TOKEN_ERRORS } from '../../auth/login-token.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { issueProgramKey, KeyAlreadyShown } from '../../ops/program-keys.js';
import { generatedKeyNote } from '../../ops/key-notes.js';
import { maskKey } from '../../auth/secret-hash.js';

export function cliProgramKey(deps: AppDeps) {
  return async function handleProgramKey(ctx: Context): Promise<void> {
    const account = await authenticateLoginToken(ctx, deps.db, LOGIN_TOKEN_ERRORS.programs, deps.now());
    const id = parseId(ctx.params.id);
    const body = readBody(ctx);
    if (body.replace !== undefined && typeof body.replace !== 'boolean') fail(ERRORS.cliProgramKeyReplaceInvalid);
    await programWithRole(deps.db, account.id, id, 'keys:manage');
    let issued;
    try {
      issued = await issueProgramKey(deps.db, id, deps.now(), { keepShown: body.replace !== true, actor: requestActor(ctx) });
    } catch (err) {
      if (err instanceof KeyAlreadyShown) fail(ERRORS.cliProgramKeyAlreadyShown);
      throw err;
    }
    // The only answer that carries the full key: keep it out of every cache.
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: { program_id: id, api_key: issued.key, api_token_masked: maskKey(issued.key.slice(-4)), replaced: issued.replaced, note: generatedKeyNote(issued.replaced) },
    } satisfies CliProgramKeyResponse;
  };
}
