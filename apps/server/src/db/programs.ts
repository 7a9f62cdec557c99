/** Program rows as the API shows them (2.1): the key only as `api_token_masked`. */
import { LIMITS, type EventActor } from '@reftrack/contract';
import { appendEvents } from './outbox.js';
import type { Knex } from 'knex';
import { insertId } from './insert-id.js';
import type { CommissionType, LeadAuth, ProgramView } from '@reftrack/contract';
import { maskKey, sha256Hex } from '../auth/secret-hash.js';
import { newProgramKey } from '../domain/ids.js';

export type { ProgramView };

const iso = (ms: unknown): string => new Date(Number(ms)).toISOString();

export function programQuery(db: Knex) {
  return db('programs as p')
    .leftJoin('program_keys as k', 'k.program_id', 'p.id')
    .select(
      'p.id', 'p.workspace_id', 'p.name', 'p.domain', 'p.commission_type', 'p.commission_rate', 'p.attribution_window_days', 'p.lead_auth', 'p.commission_hold_days', 'p.payout_minimum',
      'p.created_at', 'p.updated_at', 'k.key_last4', 'k.rotation_marked_at', 'k.rotation_deadline', 'k.revealed_at',
    );
}

export function toProgramView(row: Record<string, unknown>): ProgramView {
  return {
    id: Number(row.id),
    advertiser_id: row.workspace_id == null ? null : Number(row.workspace_id),
    name: row.name as string,
    domain: row.domain as string,
    commission_type: row.commission_type as CommissionType,
    commission_rate: Number(row.commission_rate),
    attribution_window_days: Number(row.attribution_window_days),
    lead_auth: row.lead_auth as LeadAuth,
    api_token_masked: maskKey(row.key_last4 as string | null),
    api_key_revealed_at: row.revealed_at == null ? null : iso(row.revealed_at),
    key_rotation: row.rotation_deadline == null ? null : { marked_at: iso(row.rotation_marked_at ?? row.rotation_deadline), rotate_by: iso(row.rotation_deadline) },
    commission_hold_days: Number(row.commission_hold_days),
    payout_minimum: Number(row.payout_minimum),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export async function readProgram(db: Knex, id: number): Promise<ProgramView | undefined> {
  const row = await programQuery(db).where('p.id', id).first();
  return row ? toProgramView(row) : undefined;
}

export interface NewProgram {
  name: string;
  domain: string;
  commission_type: CommissionType;
  commission_rate: number;
  attribution_window_days?: number;
  lead_auth?: LeadAuth;
  commission_hold_days?: number;
  payout_minimum?: number;
}

/**
 * A program's row, with the defaults a program gets when its input leaves them out. The seed
 * fixture passes its own unchecked strings, hence the wider types.
 */
export function programRow(workspaceId: number | null, input: Omit<NewProgram, 'commission_type' | 'lead_auth'> & { commission_type: string; lead_auth?: string }, now: number): Record<string, unknown> {
  return {
    workspace_id: workspaceId,
    name: input.name,
    domain: input.domain,
    commission_type: input.commission_type,
    commission_rate: input.commission_rate,
    attribution_window_days: input.attribution_window_days ?? 60,
    lead_auth: input.lead_auth ?? 'server_required',
    commission_hold_days: input.commission_hold_days ?? LIMITS.commissionHoldDaysDefault,
    payout_minimum: input.payout_minimum ?? 0,
    created_at: now,
    updated_at: now,
  };
}

/**
 * Creates a program with its key (2.2: one key, created with the program). Creation does not
 * reveal the key (5.1): its plain text is dropped here; an owner generates a fresh one to use it.
 */
export async function createProgram(db: Knex, workspaceId: number, input: NewProgram, now: number, actor: EventActor | null = null): Promise<ProgramView> {
  const id = await db.transaction(async (trx) => {
    const programId = await insertId(trx, 'programs', programRow(workspaceId, input, now));
    const unrevealed = newProgramKey();
    await trx('program_keys').insert({ program_id: programId, key_hash: sha256Hex(unrevealed), key_last4: unrevealed.slice(-4), created_at: now, revealed_at: null });
    await appendEvents(trx, [{ type: 'program.created', programId, workspaceId, data: { program_id: programId, name: input.name }, occurredAt: now, actor }]);
    return programId;
  });
  return (await readProgram(db, id))!;
}
