/** `seed --demo` / `start --demo`: a demo workspace, program, partner and link, and the demo key (kept across restarts). */
import type { Db } from '../db/knex.js';
import { loadFixture } from './fixture.js';
import { demoProgramKey } from './demo-key.js';

export const DEMO = { email: 'demo@reftrack.test', shortLink: 'demo', partnerCode: 'demo-partner' } as const;

/** The demo shop page (routes/demo/shop.ts): the tracker embedded, a sign-up and a buy button. */
export const DEMO_SHOP_PATH = '/demo/shop';

export interface DemoResult {
  programId: number;
  apiKey: string;
  /** The key is the one of the last run (read back from keyFile), not a new one. */
  keyKept: boolean;
  keyFile: string;
  /** The demo shop through the demo partner's link: opening it records a click. */
  testLink: string;
}

export interface DemoOptions {
  keyFile: string;
  /** Issue a new key even when the saved one still works (`--rotate-demo-key`). */
  rotateKey?: boolean;
  now?: number;
}

export async function seedDemo(db: Db, publicBaseUrl: string, options: DemoOptions): Promise<DemoResult> {
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
  const key = await demoProgramKey(db, ids.program, options.keyFile, { rotate: options.rotateKey ?? false, now: options.now ?? Date.now() });
  return { programId: ids.program, apiKey: key.apiKey, keyKept: key.kept, keyFile: key.file, testLink: `${publicBaseUrl}${DEMO_SHOP_PATH}?aff=${DEMO.shortLink}` };
}
