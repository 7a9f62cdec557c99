/**
 * GET/POST /api/apply/:slug — the public application page's API (docs/partners.md, "Applications").
 * No session. An unknown slug and a program closed for applications answer the same 404. The form's
 * answer is the same for a new application, a duplicate and an existing partner's address.
 */
import type { Context } from 'koa';
import { APPLICATION_RECEIVED_MESSAGE, APPLY_SLUG_PATTERN, ERRORS, type PublicProgramTerms } from '@reftrack/contract';
import type { AppDeps } from '../../deps.js';
import { fail } from '../../api-error.js';
import { readBody } from '../../http/input.js';
import { bool } from '../../db/knex.js';
import { parseApplication, submitApplication } from '../../domain/applications.js';

async function openProgram(deps: AppDeps, ctx: Context): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- a database row
  const slug = String(ctx.params.slug ?? '');
  if (!APPLY_SLUG_PATTERN.test(slug)) fail(ERRORS.applicationsClosed);
  const row = await deps.db('program_portal_settings as s')
    .join('programs as p', 'p.id', 's.program_id')
    .where('s.apply_slug', slug)
    .first('s.applications_open', 'p.id', 'p.name', 'p.domain', 'p.commission_type', 'p.commission_rate', 'p.attribution_window_days', 'p.commission_hold_days', 'p.payout_minimum');
  if (!row || !bool(row.applications_open)) fail(ERRORS.applicationsClosed);
  return row;
}

export function publicProgramTerms(deps: AppDeps) {
  return async function handleTerms(ctx: Context): Promise<void> {
    const p = await openProgram(deps, ctx);
    const data: PublicProgramTerms = {
      program_name: p.name,
      domain: p.domain ?? null,
      commission_type: p.commission_type,
      commission_rate: Number(p.commission_rate),
      cookie_window_days: Number(p.attribution_window_days),
      hold_days: Number(p.commission_hold_days),
      payout_minimum: Number(p.payout_minimum),
    };
    ctx.body = { success: true, data };
  };
}

export function submitApplicationRoute(deps: AppDeps) {
  return async function handleSubmit(ctx: Context): Promise<void> {
    const program = await openProgram(deps, ctx);
    const input = parseApplication(readBody(ctx));
    await deps.atomic((trx) => submitApplication(trx, Number(program.id), input, deps.now()));
    ctx.status = 202;
    ctx.body = { success: true, data: { received: true, message: APPLICATION_RECEIVED_MESSAGE } };
  };
}
