/**
 * Processor connections (docs/stripe.md): one row per program connected to Stripe, holding the
 * account id, the connection's own intake address id (`whe_…`) and the webhook signing secret
 * sealed by the secret box. The secret is opened only to check a signature; it is never read back
 * to anyone.
 */
import type { Knex } from 'knex';
import type { EventActor } from '@reftrack/contract';
import { appendEvents } from './outbox.js';
import { newWebhookEndpointId } from '../domain/ids.js';
import type { SecretBox } from '../secrets/secret-box.js';
import { isSqlite } from './knex.js';

/** Where the sealed secrets live, and the purpose they are bound to (see secret-box.ts). */
export const STRIPE_SECRET_COLUMN = { table: 'processor_connections', column: 'secret_ciphertext', purpose: 'processor_connections.secret_ciphertext' } as const;

export interface ProcessorConnection {
  id: number;
  programId: number;
  /** acct_…; null only for a connection carried over from an older release without one. */
  accountId: string | null;
  endpointId: string;
  secretCiphertext: string;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['id', 'program_id', 'account_id', 'endpoint_id', 'secret_ciphertext', 'created_at', 'updated_at'];

function toConnection(row: Record<string, unknown>): ProcessorConnection {
  return {
    id: Number(row.id),
    programId: Number(row.program_id),
    accountId: (row.account_id as string | null) ?? null,
    endpointId: String(row.endpoint_id),
    secretCiphertext: String(row.secret_ciphertext),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export async function connectionOfProgram(db: Knex, programId: number): Promise<ProcessorConnection | undefined> {
  const row = await db('processor_connections').where({ program_id: programId }).first(COLUMNS);
  return row ? toConnection(row) : undefined;
}

export async function connectionByEndpoint(db: Knex, endpointId: string): Promise<ProcessorConnection | undefined> {
  const row = await db('processor_connections').where({ endpoint_id: endpointId }).first(COLUMNS);
  return row ? toConnection(row) : undefined;
}

/** Up to `limit` connections of an account, oldest first. */
export async function connectionsOfAccount(db: Knex, accountId: string, limit: number): Promise<ProcessorConnection[]> {
  const rows = await db('processor_connections').where({ account_id: accountId }).orderBy('id').limit(limit).select(COLUMNS);
  return rows.map(toConnection);
}

/** The signing secret in plain text, for one signature check. */
export const openSecret = (box: SecretBox, connection: ProcessorConnection): string => box.open(connection.secretCiphertext, STRIPE_SECRET_COLUMN.purpose);

/**
 * Connects a program, or replaces its account and secret. One statement: a new connection gets a
 * new intake address; an existing one keeps its address, so that rolling the signing secret in
 * Stripe does not change the URL there.
 */
export async function saveConnection(db: Knex, box: SecretBox, programId: number, accountId: string, secret: string, now: number, actor: EventActor): Promise<void> {
  await db.transaction(async (trx) => {
    await saveConnectionRow(trx, box, programId, accountId, secret, now);
    await appendEvents(trx, [{ type: 'payments.connected', programId, data: { program_id: programId, provider: 'stripe', account_id: accountId }, occurredAt: now, actor }]);
  });
}

async function saveConnectionRow(db: Knex.Transaction, box: SecretBox, programId: number, accountId: string, secret: string, now: number): Promise<void> {
  await db('processor_connections')
    .insert({
      program_id: programId,
      provider: 'stripe',
      account_id: accountId,
      endpoint_id: newWebhookEndpointId(),
      secret_ciphertext: box.seal(secret, STRIPE_SECRET_COLUMN.purpose),
      created_at: now,
      updated_at: now,
    })
    .onConflict('program_id')
    .merge(['account_id', 'secret_ciphertext', 'updated_at']);
}

/** Disconnects a program: its intake address stops answering (404) at once. */
export async function deleteConnection(db: Knex, programId: number, now: number, actor: EventActor): Promise<void> {
  await db.transaction(async (trx) => {
    const deleted = await trx('processor_connections').where({ program_id: programId }).delete();
    if (deleted > 0) await appendEvents(trx, [{ type: 'payments.disconnected', programId, data: { program_id: programId, provider: 'stripe' }, occurredAt: now, actor }]);
  });
}

/**
 * Moves the plaintext secrets of earlier releases (`programs.stripe_webhook_secret`) into sealed
 * connections and clears the old columns, each program in one transaction. Idempotent: a program
 * already moved has nothing left to move, and a connection that already exists is kept.
 *
 * On SQLite the cleared bytes are overwritten too (secure_delete, then a checkpoint that empties
 * the write-ahead log), so the file no longer holds them; PostgreSQL keeps old row versions until
 * VACUUM. Copies in backups remain: docs/stripe.md advises rolling the secret in Stripe.
 */
export async function upgradeLegacyStripeSecrets(db: Knex, box: SecretBox, now: number): Promise<number> {
  const rows = (await db('programs').whereNotNull('stripe_webhook_secret').select('id', 'stripe_account_id', 'stripe_webhook_secret')) as Array<{ id: number; stripe_account_id: string | null; stripe_webhook_secret: string }>;
  if (rows.length === 0) return 0;
  const sqlite = isSqlite(db);
  if (sqlite) await db.raw('pragma secure_delete = on');
  for (const row of rows) {
    await db.transaction(async (trx) => {
      await trx('processor_connections')
        .insert({
          program_id: row.id,
          provider: 'stripe',
          account_id: row.stripe_account_id || null,
          endpoint_id: newWebhookEndpointId(),
          secret_ciphertext: box.seal(row.stripe_webhook_secret, STRIPE_SECRET_COLUMN.purpose),
          created_at: now,
          updated_at: now,
        })
        .onConflict('program_id')
        .ignore();
      await trx('programs').where({ id: row.id }).update({ stripe_webhook_secret: null, stripe_account_id: null });
    });
  }
  if (sqlite) {
    await db.raw('pragma secure_delete = off');
    await db.raw('pragma wal_checkpoint(TRUNCATE)');
  }
  return rows.length;
}
