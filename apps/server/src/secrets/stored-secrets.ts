/**
 * Every column that holds secrets sealed by the secret box, and what the server does with them as
 * a whole: at start, move plaintext secrets of earlier releases into sealed columns and check that
 * every stored value names a key it has; on `reftrack-server secrets rotate`, seal every value
 * again with the current key. A feature that stores another read-back secret adds its column here.
 */
import type { Knex } from 'knex';
import { ConfigError } from '../config.js';
import { STRIPE_SECRET_COLUMN, upgradeLegacyStripeSecrets } from '../db/processor-connections.js';
import { PAYOUT_DETAILS_COLUMN } from '../domain/payout-details.js';
import { SEALED_HEAD_LENGTH, sealedKeyId, type SecretBox } from './secret-box.js';
import { WEBHOOK_SECRETS_COLUMN } from '../webhooks/signing.js';

/** A column of sealed values; its table has an integer `id` primary key. */
export interface SealedColumn {
  table: string;
  column: string;
  /** The purpose each value is bound to (GCM associated data). */
  purpose: string;
}

export const SEALED_COLUMNS: readonly SealedColumn[] = [STRIPE_SECRET_COLUMN, PAYOUT_DETAILS_COLUMN, WEBHOOK_SECRETS_COLUMN];

/** Stored values, by the key id they name (`?` for a value in no known format). */
export async function keyIdsInUse(db: Knex): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const { table, column } of SEALED_COLUMNS) {
    // The length is a constant written into the SQL: PostgreSQL matches the grouped expression by text.
    const rows = (await db(table)
      .select(db.raw(`substr(??, 1, ${SEALED_HEAD_LENGTH}) as head`, [column]))
      .count({ n: '*' })
      .groupBy('head')) as Array<{ head: string; n: number | string }>;
    for (const row of rows) {
      const keyId = sealedKeyId(String(row.head)) ?? '?';
      counts.set(keyId, (counts.get(keyId) ?? 0) + Number(row.n));
    }
  }
  return counts;
}

/** Refuses the start when a stored secret names a key the server was not given: one clear line. */
export async function assertSecretsReadable(db: Knex, box: SecretBox): Promise<void> {
  const unknown = [...(await keyIdsInUse(db))].filter(([keyId]) => !box.knows(keyId));
  if (unknown.length === 0) return;
  const count = unknown.reduce((sum, [, n]) => sum + n, 0);
  const ids = unknown.map(([keyId]) => keyId).join(', ');
  throw new ConfigError(
    `${count} stored secret(s) were encrypted with key id ${ids}, which is neither ENCRYPTION_KEY (key id ${box.keyId}) nor in ENCRYPTION_KEY_PREVIOUS: ` +
      'start with the key they were encrypted with (during a rotation: the old key in ENCRYPTION_KEY_PREVIOUS), see docs/operator.md "Secrets at rest"',
  );
}

/** What start and `migrate` do once the schema is current: upgrade plaintext secrets, then check every key id. */
export async function prepareStoredSecrets(db: Knex, box: SecretBox, now: number): Promise<{ upgraded: number }> {
  const upgraded = await upgradeLegacyStripeSecrets(db, box, now);
  await assertSecretsReadable(db, box);
  return { upgraded };
}

export interface RotationResult {
  /** Values sealed again with the current key. */
  resealed: number;
  /** Values already sealed with it. */
  current: number;
}

const BATCH = 200;

/**
 * Seals every stored secret again with the current key, in batches. Each value is replaced only if
 * it is still the one read (a connection saved meanwhile is already sealed with the current key),
 * so the command may run while servers are serving.
 */
export async function rotateStoredSecrets(db: Knex, box: SecretBox): Promise<RotationResult> {
  const result: RotationResult = { resealed: 0, current: 0 };
  for (const { table, column, purpose } of SEALED_COLUMNS) {
    const head = box.currentHead;
    const total = Number((await db(table).count({ n: '*' }).first())?.n ?? 0);
    let lastId = 0;
    for (;;) {
      const rows = (await db(table)
        .where('id', '>', lastId)
        .whereRaw('substr(??, 1, ?) <> ?', [column, head.length, head])
        .orderBy('id')
        .limit(BATCH)
        .select('id', column)) as Array<Record<string, unknown>>;
      if (rows.length === 0) break;
      for (const row of rows) {
        const old = String(row[column]);
        const sealed = box.seal(box.open(old, purpose), purpose);
        result.resealed += await db(table).where({ id: row.id, [column]: old }).update({ [column]: sealed });
      }
      lastId = Number(rows[rows.length - 1].id);
    }
    result.current += total;
  }
  result.current -= result.resealed;
  return result;
}
