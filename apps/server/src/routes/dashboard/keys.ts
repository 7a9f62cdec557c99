/** POST /api/dashboard/programs/:id/key — generate or regenerate the program key (5.4, owner only). */
import type { Context } from 'koa';
import type { GeneratedKey } from '@reftrack/contract';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { issueProgramKey } from '../../ops/program-keys.js';
import { generatedKeyNote } from '../../ops/key-notes.js';
import { maskKey } from '../../auth/secret-hash.js';

export function regenerateKey(deps: AppDeps) {
  return async function handleRegenerate(ctx: Context): Promise<void> {
    const id = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, id, 'keys:manage');
    const { key: apiKey, replaced } = await issueProgramKey(deps.db, id, deps.now(), { keepShown: false, actor: requestActor(ctx) });
    // The only response that ever carries the full key: keep it out of every cache.
    ctx.set('Cache-Control', 'no-store');
    const data: GeneratedKey = { program_id: id, api_key: apiKey, api_token_masked: maskKey(apiKey.slice(-4)), note: generatedKeyNote(replaced) };
    ctx.body = { success: true, data };
  };
}
