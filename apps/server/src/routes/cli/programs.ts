/** POST /api/v1/cli/init and GET /api/v1/cli/programs (login token; 4.7, 7.6). */
import type { Context } from 'koa';
import { BRAND, ERRORS, trackerSnippet, type CliInitResponse, type CliProgramsResponse } from '@reftrack/contract';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { requestActor } from '../../auth/actor.js';
import type { AppDeps } from '../../deps.js';
import { authenticateLoginToken, LOGIN_TOKEN_ERRORS } from '../../auth/login-token.js';
import { demand, roleIn } from '../../auth/workspace-access.js';
import { createProgram, programQuery, toProgramView } from '../../db/programs.js';
import { parseNewProgram } from '../../domain/program-input.js';

export function cliInit(deps: AppDeps) {
  return async function handleInit(ctx: Context): Promise<void> {
    const account = await authenticateLoginToken(ctx, deps.db, LOGIN_TOKEN_ERRORS.init, deps.now());
    const body = readBody(ctx);
    let workspaceId: number;
    if (body.advertiser_id !== undefined && body.advertiser_id !== null) {
      const requested = Number(body.advertiser_id);
      const role = Number.isSafeInteger(requested) ? await roleIn(deps.db, account.id, requested) : undefined;
      if (!role) fail(ERRORS.cliInitAdvertiserMismatch);
      demand(role, 'programs:write');
      workspaceId = requested;
    } else {
      const owned = await deps.db('memberships').where({ account_id: account.id, role: 'owner' }).orderBy('workspace_id').first('workspace_id');
      if (!owned) fail(ERRORS.cliInitNoAdvertiser);
      workspaceId = owned.workspace_id;
    }
    const program = await createProgram(deps.db, workspaceId, parseNewProgram(body), deps.now(), requestActor(ctx));
    const base = deps.config.publicBaseUrl;
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: {
        program: { ...program, advertiser_id: workspaceId },
        api_key_instructions: `The program key is never shown at creation. A workspace owner generates it once, from the terminal with \`${BRAND.cli} keys generate ${program.id}\`, or in the dashboard (${base}/programs/${program.id}/settings → API key → Generate key), and stores it server-side as ${BRAND.token.toUpperCase()}_API_KEY.`,
        next_steps: [
          `Add the tracker to your site: ${trackerSnippet(base, program.id)}`,
          `Generate the program key (\`${BRAND.cli} keys generate ${program.id}\`, or Generate key in the dashboard) and set REFTRACK_API_KEY on your server.`,
          'Report signups: await reftrack.trackLead({ clickId, customerExternalId: user.id })',
          'Report payments: await reftrack.trackSale({ customerExternalId: user.id, amount: 4900, invoiceId: invoice.id })',
          `Check the integration: ${BRAND.cli} test-event chain`,
        ],
      },
    } satisfies CliInitResponse;
  };
}

export function cliPrograms(deps: AppDeps) {
  return async function handlePrograms(ctx: Context): Promise<void> {
    const account = await authenticateLoginToken(ctx, deps.db, LOGIN_TOKEN_ERRORS.programs, deps.now());
    const rows = await programQuery(deps.db).join('memberships as m', 'm.workspace_id', 'p.workspace_id').where('m.account_id', account.id).orderBy('p.id');
    ctx.body = { success: true, data: rows.map((r) => ({ ...toProgramView(r), advertiser_id: Number(r.workspace_id) })) } satisfies CliProgramsResponse;
  };
}
