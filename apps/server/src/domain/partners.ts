/** A partner's enrollment in a program (2.3): what lets its links' sales be commissioned there. */
import type { Knex } from 'knex';
import type { EventActor } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import { isSqlite } from '../db/knex.js';

/**
 * Enrolls the partner once (the pair is unique in the database); a new enrollment writes
 * `partner.enrolled` in the same transaction. True when it was new.
 */
export async function enrollPartner(trx: Knex.Transaction, partnerId: number, programId: number, now: number, actor: EventActor): Promise<boolean> {
  const insert = trx('partner_programs').insert({ partner_id: partnerId, program_id: programId, created_at: now }).onConflict(['partner_id', 'program_id']).ignore();
  // Whether this insert made the row: SQLite runs one writer at a time, so a look first is
  // exact there; on PostgreSQL two requests may race, and only the one whose row is returned wins.
  if (isSqlite(trx)) {
    if (await trx('partner_programs').where({ partner_id: partnerId, program_id: programId }).first('id')) return false;
    await insert;
  } else if ((await insert.returning('id')).length === 0) {
    return false;
  }
  const partner = await trx('partners').where({ id: partnerId }).first('id', 'name', 'code');
  const data = { partner: { id: Number(partner.id), name: String(partner.name), code: String(partner.code) }, program_id: programId };
  await appendEvents(trx, [{ type: 'partner.enrolled', programId, data, occurredAt: now, actor }]);
  return true;
}
