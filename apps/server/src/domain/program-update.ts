/** Applying a validated program update (dashboard and agent API), with the checks that span fields. */
import type { Knex } from 'knex';
import type { CommissionType, EventActor } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import type { NewProgram } from '../db/programs.js';
import { checkTerms } from './program-input.js';

export async function updateProgram(db: Knex, id: number, update: Partial<NewProgram>, now: number, actor: EventActor): Promise<void> {
  await db.transaction(async (trx) => {
    if (update.commission_type !== undefined || update.commission_rate !== undefined) {
      const current = await trx('programs').where({ id }).first('commission_type', 'commission_rate');
      checkTerms((update.commission_type ?? current.commission_type) as CommissionType, update.commission_rate ?? Number(current.commission_rate));
    }
    await trx('programs').where({ id }).update({ ...update, updated_at: now });
    const changed = Object.keys(update).filter((k) => update[k as keyof NewProgram] !== undefined);
    if (changed.length > 0) await appendEvents(trx, [{ type: 'program.updated', programId: id, data: { program_id: id, changed }, occurredAt: now, actor }]);
  });
}
