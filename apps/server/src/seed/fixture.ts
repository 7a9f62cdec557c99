/**
 * `reftrack-server seed --file F`: loads the design's fixture format. Idempotent: rows are keyed by
 * their natural identity (id, email, code, short_link), so a second load updates instead of duplicating.
 * Keys given in plain text are stored only as hashes.
 */
import fs from 'node:fs';
import type { Knex } from 'knex';
import { COMMISSION_TYPES, LEAD_AUTH_MODES } from '@reftrack/contract';
import type { Db } from '../db/knex.js';
import { isSqlite } from '../db/knex.js';
import { sha256Hex } from '../auth/secret-hash.js';
import { forgetProgramKeys } from '../auth/program-key.js';
import { programRow } from '../db/programs.js';

export interface Fixture {
  accounts?: Array<{ email: string; name?: string; suspended?: boolean }>;
  workspaces?: Array<{ id: number; name: string; members?: Array<{ email: string; role: 'owner' | 'member' | 'restricted' }> }>;
  programs?: Array<{
    id: number;
    workspace?: number;
    name: string;
    domain: string;
    commission_type: string;
    commission_rate: number;
    attribution_window_days?: number;
    lead_auth?: string;
    api_key?: string;
  }>;
  /** `workspace` defaults to the workspace of the partner's first enrolled program. */
  partners?: Array<{ id: number; name: string; email?: string; code: string; workspace?: number }>;
  enrollments?: Array<{ partner: number; program: number }>;
  links?: Array<{ short_link: string; partner?: number | null; program?: number | null; active?: boolean }>;
}

export class FixtureError extends Error {}

function check(fixture: Fixture): void {
  for (const p of fixture.programs ?? []) {
    if (!(COMMISSION_TYPES as readonly string[]).includes(p.commission_type)) throw new FixtureError(`program ${p.id}: commission_type must be one of ${COMMISSION_TYPES.join(', ')}`);
    if (p.lead_auth && !(LEAD_AUTH_MODES as readonly string[]).includes(p.lead_auth)) throw new FixtureError(`program ${p.id}: lead_auth must be one of ${LEAD_AUTH_MODES.join(', ')}`);
    if (!(p.commission_rate > 0)) throw new FixtureError(`program ${p.id}: commission_rate must be positive`);
  }
}

async function upsert(trx: Knex.Transaction, table: string, conflict: string[], row: Record<string, unknown>, keep: string[] = ['created_at']): Promise<void> {
  const merge = Object.keys(row).filter((k) => !conflict.includes(k) && !keep.includes(k));
  const q = trx(table).insert(row).onConflict(conflict);
  await (merge.length ? q.merge(merge) : q.ignore());
}

/** After explicit ids, PostgreSQL's sequences must move past them. */
async function bumpSequences(trx: Knex.Transaction, tables: string[]): Promise<void> {
  if (isSqlite(trx as unknown as Db)) return;
  for (const table of tables) {
    await trx.raw(`select setval(pg_get_serial_sequence(?, 'id'), greatest((select coalesce(max(id), 0) from ??), 1))`, [table, table]);
  }
}

export async function loadFixture(db: Db, fixture: Fixture, now = Date.now()): Promise<void> {
  check(fixture);
  await db.transaction(async (trx) => {
    for (const a of fixture.accounts ?? []) {
      await upsert(trx, 'accounts', ['email'], { email: a.email.toLowerCase(), name: a.name ?? null, suspended: a.suspended ?? false, created_at: now });
    }
    for (const w of fixture.workspaces ?? []) {
      await upsert(trx, 'workspaces', ['id'], { id: w.id, name: w.name, created_at: now });
      for (const m of w.members ?? []) {
        const account = await trx('accounts').where({ email: m.email.toLowerCase() }).first('id');
        if (!account) throw new FixtureError(`workspace ${w.id}: member ${m.email} is not in accounts`);
        await upsert(trx, 'memberships', ['workspace_id', 'account_id'], { workspace_id: w.id, account_id: account.id, role: m.role }, []);
      }
    }
    for (const p of fixture.programs ?? []) {
      await upsert(trx, 'programs', ['id'], { id: p.id, ...programRow(p.workspace ?? null, p, now) });
      if (p.api_key) {
        await upsert(trx, 'program_keys', ['program_id'], { program_id: p.id, key_hash: sha256Hex(p.api_key), key_last4: p.api_key.slice(-4), created_at: now, rotation_marked_at: null, rotation_deadline: null, revealed_at: now });
      }
    }
    for (const p of fixture.partners ?? []) {
      const firstProgram = (fixture.enrollments ?? []).find((e) => e.partner === p.id)?.program;
      const workspace = p.workspace ?? (fixture.programs ?? []).find((pr) => pr.id === firstProgram)?.workspace ?? null;
      await upsert(trx, 'partners', ['id'], { id: p.id, name: p.name, email: p.email ?? null, code: p.code, workspace_id: workspace, created_at: now });
    }
    for (const e of fixture.enrollments ?? []) {
      await upsert(trx, 'partner_programs', ['partner_id', 'program_id'], { partner_id: e.partner, program_id: e.program, created_at: now });
    }
    for (const l of fixture.links ?? []) {
      await upsert(trx, 'referral_links', ['short_link'], { short_link: l.short_link, partner_id: l.partner ?? null, program_id: l.program ?? null, active: l.active ?? true, created_at: now });
    }
    await bumpSequences(trx, ['workspaces', 'programs', 'partners']);
  });
  forgetProgramKeys();
}

export function readFixtureFile(file: string): Fixture {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Fixture;
  } catch (err) {
    throw new FixtureError(`cannot read fixture ${file}: ${(err as Error).message}`);
  }
}
