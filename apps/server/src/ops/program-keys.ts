/** Operator and owner actions on program keys (3.2, 5.4, 5.5). */
import type { Knex } from 'knex';
import { newProgramKey } from '../domain/ids.js';
import { sha256Hex } from '../auth/secret-hash.js';
import { forgetProgramKeys } from '../auth/program-key.js';

export class KeyOpError extends Error {}

/**
 * Issues a new key and returns it in plain text, the only time it exists outside the caller's hands.
 * The old hash is overwritten in the same statement, so the two keys never overlap; the rotation
 * flag clears.
 */
export async function regenerateProgramKey(db: Knex, programId: number, now = Date.now()): Promise<string> {
  const program = await db('programs').where({ id: programId }).first('id');
  if (!program) throw new KeyOpError(`program ${programId} not found`);
  const key = newProgramKey();
  await db('program_keys')
    .insert({ program_id: programId, key_hash: sha256Hex(key), key_last4: key.slice(-4), created_at: now, rotation_marked_at: null, rotation_deadline: null })
    .onConflict('program_id')
    .merge(['key_hash', 'key_last4', 'created_at', 'rotation_marked_at', 'rotation_deadline']);
  forgetProgramKeys();
  return key;
}

export async function markKeyForRotation(db: Knex, programId: number, deadline: number, now = Date.now()): Promise<void> {
  const updated = await db('program_keys').where({ program_id: programId }).update({ rotation_marked_at: now, rotation_deadline: deadline });
  if (updated === 0) throw new KeyOpError(`program ${programId} has no key`);
  forgetProgramKeys();
}
