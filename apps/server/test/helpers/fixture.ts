import type { Fixture } from '../../src/seed/fixture.js';

export const KEY1 = 'aff_0123456789abcdefghijABCDEFGHIJ01';
export const KEY2 = 'aff_0123456789abcdefghijABCDEFGHIJ02';
/** A key issued before the `aff_` prefix existed (5.1). */
export const LEGACY_KEY = 'legacy0123456789abcdefghijKLMNOP03';

/**
 * Program 1: server_required, percent 20, window 60 days. Program 2: browser_allowed.
 * Program 3: legacy key, recurring_fixed. Links: pat20 (1), sam10 (1), off (disabled),
 * open1 (2), nopartner (broken), p3 (3), noenroll (partner 3 not enrolled in 1).
 */
export function baseFixture(): Fixture {
  return {
    accounts: [{ email: 'owner@acme.test', name: 'Ada Owner' }],
    workspaces: [{ id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }] }],
    programs: [
      { id: 1, workspace: 1, name: 'Acme', domain: 'acme.test', commission_type: 'percent', commission_rate: 20, attribution_window_days: 60, lead_auth: 'server_required', api_key: KEY1 },
      { id: 2, workspace: 1, name: 'Open', domain: 'open.test', commission_type: 'percent', commission_rate: 10, attribution_window_days: 30, lead_auth: 'browser_allowed', api_key: KEY2 },
      { id: 3, workspace: 1, name: 'Legacy', domain: 'legacy.test', commission_type: 'recurring_fixed', commission_rate: 5, attribution_window_days: 60, lead_auth: 'server_required', api_key: LEGACY_KEY },
    ],
    partners: [
      { id: 1, name: 'Pat', email: 'pat@p.test', code: 'pat' },
      { id: 2, name: 'Sam', email: 'sam@p.test', code: 'sam' },
      { id: 3, name: 'Noe', email: 'noe@p.test', code: 'noe' },
    ],
    enrollments: [
      { partner: 1, program: 1 },
      { partner: 2, program: 1 },
      { partner: 1, program: 2 },
      { partner: 1, program: 3 },
    ],
    links: [
      { short_link: 'pat20', partner: 1, program: 1, active: true },
      { short_link: 'sam10', partner: 2, program: 1, active: true },
      { short_link: 'off', partner: 1, program: 1, active: false },
      { short_link: 'open1', partner: 1, program: 2, active: true },
      { short_link: 'nopartner', partner: null, program: 1, active: true },
      { short_link: 'p3', partner: 1, program: 3, active: true },
      { short_link: 'noenroll', partner: 3, program: 1, active: true },
    ],
  };
}
