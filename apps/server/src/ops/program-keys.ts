/** Operator and owner actions on program keys (3.2, 5.4, 5.5). */
import type { Knex } from 'knex';
import type { EventActor } from '@reftrack/contract';
import { appendEvents } from '../db/outbox.js';
import { operatorActor } from '../auth/actor.js';
import { newProgramKey } from '../domain/ids.js';
import { maskKey, sha256Hex } from '../auth/secret-hash.js';
import { forgetProgramKeys } from '../auth/program-key.js';

export class KeyOpError extends Error {}

/** `issueProgramKey` with `keepShown`: the current key was already shown once and is kept. */
export class KeyAlreadyShown extends Error {
  constructor(readonly programId: number) {
    super(`program ${programId}: the current key was already shown`);
  }
}

/**
 * Issues a new key and returns it in plain text, the only time it exists outside the caller's hands.
 * The old hash is overwritten in the same statement, so the two keys never overlap; the rotation
 * flag clears.
 */
export async function regenerateProgramKey(db: Knex, programId: number, now = Date.now()): Promise<string> {
  return (await issueProgramKey(db, programId, now, { keepShown: false, actor: operatorActor() })).key;
}

export interface IssuedKey {
  key: string;
  /** A key that had been shown was replaced (it stopped working now); false for a first key. */
  replaced: boolean;
}

/**
 * Issues a new key, marks it shown (`revealed_at`: the caller returns it in full) and returns it.
 * With `keepShown`, only a key that was never shown is replaced: the condition sits in the UPDATE
 * itself, so of two concurrent first generations one wins and the other gets KeyAlreadyShown,
 * never silently replacing the key the first one just handed out.
 */
export async function issueProgramKey(db: Knex, programId: number, now: number, options: { keepShown: boolean; actor: EventActor }): Promise<IssuedKey> {
  const key = newProgramKey();
  const fields = { key_hash: sha256Hex(key), key_last4: key.slice(-4), created_at: now, rotation_marked_at: null, rotation_deadline: null, revealed_at: now };
  const regenerated = (trx: Knex.Transaction) =>
    appendEvents(trx, [{ type: 'program_key.regenerated', programId, data: { program_id: programId, api_token_masked: maskKey(fields.key_last4) }, occurredAt: now, actor: options.actor }]);
  const issued = await db.transaction(async (trx) => {
    const current = await trx('program_keys').where({ program_id: programId }).first('revealed_at');
    if (!current) {
      const program = await trx('programs').where({ id: programId }).first('id');
      if (!program) throw new KeyOpError(`program ${programId} not found`);
      // A program without a key row (fixtures may create one): the unique program_id settles a race.
      await trx('program_keys').insert({ program_id: programId, ...fields }).onConflict('program_id').merge(Object.keys(fields));
      await regenerated(trx);
      return { key, replaced: false };
    }
    const update = trx('program_keys').where({ program_id: programId });
    if (options.keepShown) update.whereNull('revealed_at');
    const updated = await update.update(fields);
    if (updated === 0) throw new KeyAlreadyShown(programId);
    await regenerated(trx);
    return { key, replaced: current.revealed_at != null };
  });
  forgetProgramKeys();
  return issued;
}

export async function markKeyForRotation(db: Knex, programId: number, deadline: number, now = Date.now()): Promise<void> {
  await db.transaction(async (trx) => {
    const updated = await trx('program_keys').where({ program_id: programId }).update({ rotation_marked_at: now, rotation_deadline: deadline });
    if (updated === 0) throw new KeyOpError(`program ${programId} has no key`);
    const data = { program_id: programId, rotate_by: new Date(deadline).toISOString() };
    await appendEvents(trx, [{ type: 'program_key.rotation_marked', programId, data, occurredAt: now, actor: operatorActor() }]);
  });
  forgetProgramKeys();
}
