import type { Fixture } from '../../src/seed/fixture.js';

/** `n` programs with their own keys (the sale limit is 120/min per key), each with a partner and link. */
export function programsFixture(n: number): { fixture: Fixture; keys: string[] } {
  const keys = Array.from({ length: n }, (_, i) => `aff_reliability${String(i + 1).padStart(4, '0')}abcdefghijklmnopqrst`);
  return {
    keys,
    fixture: {
      accounts: [{ email: 'owner@rel.test', name: 'Rel Owner' }],
      workspaces: [{ id: 1, name: 'Rel', members: [{ email: 'owner@rel.test', role: 'owner' }] }],
      programs: keys.map((api_key, i) => ({ id: i + 1, workspace: 1, name: `P${i + 1}`, domain: 'rel.test', commission_type: 'recurring_percent', commission_rate: 10, api_key })),
      partners: [{ id: 1, name: 'Pat', code: 'pat' }],
      enrollments: keys.map((_, i) => ({ partner: 1, program: i + 1 })),
      links: keys.map((_, i) => ({ short_link: `p${i + 1}`, partner: 1, program: i + 1, active: true })),
    },
  };
}
