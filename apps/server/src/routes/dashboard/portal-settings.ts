/** GET/PUT /api/dashboard/programs/:id/portal-settings — applications and link requests on or off (docs/partners.md). */
import type { Context } from 'koa';
import { ERRORS } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import { parseId, programWithRole } from '../../auth/workspace-access.js';
import { readPortalSettings, savePortalSettings, settingsView } from '../../domain/portal-settings.js';

export function getPortalSettings(deps: AppDeps) {
  return async function handleGet(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:read');
    ctx.body = { success: true, data: settingsView(deps.config.publicBaseUrl, programId, await readPortalSettings(deps.db, programId)) };
  };
}

export function putPortalSettings(deps: AppDeps) {
  return async function handlePut(ctx: Context): Promise<void> {
    const programId = parseId(ctx.params.id);
    await programWithRole(deps.db, ctx.state.account!.accountId, programId, 'partners:write');
    const body = readBody(ctx);
    if (typeof body.applications_open !== 'boolean' || typeof body.link_requests_open !== 'boolean') fail(ERRORS.portalSettingsInvalid);
    const next = { applicationsOpen: body.applications_open as boolean, linkRequestsOpen: body.link_requests_open as boolean };
    const saved = await deps.atomic((trx) => savePortalSettings(trx, programId, next, requestActor(ctx), deps.now()));
    ctx.body = { success: true, data: settingsView(deps.config.publicBaseUrl, programId, saved) };
  };
}
