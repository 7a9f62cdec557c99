/** The partner record named by `:id` of a portal route, when it is the signed-in person's; 404 otherwise (docs/partners.md). */
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { ERRORS } from '@reftrack/contract';
import { fail } from '../api-error.js';
import { parseId } from './workspace-access.js';

export async function ownPartner(db: Knex, ctx: Context): Promise<number> {
  const partnerId = parseId(ctx.params.id, ERRORS.portalPartnerNotFound);
  const access = await db('partner_portal_access').where({ partner_id: partnerId, person_id: ctx.state.portalPerson!.personId }).first('id');
  if (!access) fail(ERRORS.portalPartnerNotFound);
  return partnerId;
}
