/** `seed --demo`: a demo workspace, program, partner and link; returns a fresh program key to print. */
import type { Db } from '../db/knex.js';
import { loadFixture } from './fixture.js';
import { regenerateProgramKey } from '../ops/program-keys.js';

export const DEMO = { email: 'demo@reftrack.test', shortLink: 'demo', partnerCode: 'demo-partner' } as const;

export interface DemoResult {
  programId: number;
  apiKey: string;
  testLink: string;
}

export async function seedDemo(db: Db, publicBaseUrl: string): Promise<DemoResult> {
  const existing = await db('programs').where({ name: 'Demo program', domain: 'localhost' }).first('id');
  const workspace = await db('workspaces').where({ name: 'Demo workspace' }).first('id');
  const partner = await db('partners').where({ code: DEMO.partnerCode }).first('id');
  const ids = {
    workspace: workspace?.id ?? ((await db('workspaces').max('id as m').first())?.m ?? 0) + 1,
    program: existing?.id ?? ((await db('programs').max('id as m').first())?.m ?? 0) + 1,
    partner: partner?.id ?? ((await db('partners').max('id as m').first())?.m ?? 0) + 1,
  };
  await loadFixture(db, {
    accounts: [{ email: DEMO.email, name: 'Demo Owner' }],
    workspaces: [{ id: ids.workspace, name: 'Demo workspace', members: [{ email: DEMO.email, role: 'owner' }] }],
    programs: [{ id: ids.program, workspace: ids.workspace, name: 'Demo program', domain: 'localhost', commission_type: 'percent', commission_rate: 20, attribution_window_days: 60, lead_auth: 'server_required' }],
    partners: [{ id: ids.partner, name: 'Demo Partner', email: 'partner@reftrack.test', code: DEMO.partnerCode }],
    enrollments: [{ partner: ids.partner, program: ids.program }],
    links: [{ short_link: DEMO.shortLink, partner: ids.partner, program: ids.program, active: true }],
  });
  const apiKey = await regenerateProgramKey(db, ids.program);
  return { programId: ids.program, apiKey, testLink: `${publicBaseUrl}/?aff=${DEMO.shortLink}` };
}
