/**
 * The test-flagged fixture of a program: a partner and a referral link used only by test events and
 * synthetic chains, hidden from listings and metrics. Idempotent (keyed by code and short link).
 */
import type { Db } from '../db/knex.js';

export interface TestFixture {
  shortLink: string;
  partnerId: number;
  domain: string;
}

export async function ensureTestFixture(db: Db, programId: number, now: number): Promise<TestFixture> {
  const code = `reftrack-test-${programId}`;
  const program = await db('programs').where({ id: programId }).first('workspace_id', 'domain');
  await db('partners').insert({ name: 'Reftrack test partner', email: null, code, workspace_id: program.workspace_id, is_test: true, created_at: now }).onConflict('code').ignore();
  const partner = await db('partners').where({ code }).first('id');
  await db('partner_programs').insert({ partner_id: partner.id, program_id: programId, created_at: now }).onConflict(['partner_id', 'program_id']).ignore();
  await db('referral_links').insert({ short_link: code, partner_id: partner.id, program_id: programId, active: true, is_test: true, created_at: now }).onConflict('short_link').ignore();
  return { shortLink: code, partnerId: partner.id, domain: program.domain };
}
