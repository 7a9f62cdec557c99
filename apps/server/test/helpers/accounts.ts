/** Workspace members for the accounts tests, and signing them in through the real session route. */
import { expect } from 'vitest';
import type { Fixture } from '../../src/seed/fixture.js';
import { signDevToken } from '../../src/auth/id-token.js';
import { baseFixture } from './fixture.js';
import type { TestServer } from './test-server.js';

export const OTHER_KEY = 'aff_0123456789abcdefghijABCDEFGHIJ04';

/** Workspace 1 (Acme): owner, member, restricted. Workspace 2 (Else): outsider, with program 4. */
export function accountsFixture(): Fixture {
  const f = baseFixture();
  f.accounts = [
    { email: 'owner@acme.test', name: 'Ada Owner' },
    { email: 'member@acme.test', name: 'Max Member' },
    { email: 'restricted@acme.test', name: 'Rita Restricted' },
    { email: 'outsider@else.test', name: 'Otto Outsider' },
  ];
  f.workspaces = [
    { id: 1, name: 'Acme', members: [{ email: 'owner@acme.test', role: 'owner' }, { email: 'member@acme.test', role: 'member' }, { email: 'restricted@acme.test', role: 'restricted' }] },
    { id: 2, name: 'Else', members: [{ email: 'outsider@else.test', role: 'owner' }] },
  ];
  f.programs!.push({ id: 4, workspace: 2, name: 'Else', domain: 'else.test', commission_type: 'fixed', commission_rate: 10, api_key: OTHER_KEY });
  return f;
}

/** Signs in through POST /api/dashboard/session and returns the Cookie header to send. */
export async function signInAs(s: TestServer, email: string): Promise<Record<string, string>> {
  const idToken = await signDevToken(s.db, email);
  const res = await s.post('/api/dashboard/session', { id_token: idToken });
  expect(res.status, res.text).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0];
  expect(cookie).toMatch(/^reftrack_session=.+/);
  return { cookie };
}

/** A CLI login through start → callback → poll; the poll sends `userAgent`. Returns the login token. */
export async function cliLoginAs(s: TestServer, email: string, userAgent = 'reftrack-cli/test'): Promise<string> {
  const start = await s.post('/api/v1/cli/auth/start', {});
  expect(start.status, start.text).toBe(200);
  const state = start.body.data.state as string;
  const cb = await s.post('/api/v1/cli/auth/callback', { state, id_token: await signDevToken(s.db, email) });
  expect(cb.status, cb.text).toBe(200);
  const poll = await s.get(`/api/v1/cli/auth/poll?state=${state}`, { 'user-agent': userAgent });
  expect(poll.body.data.status, poll.text).toBe('complete');
  return poll.body.data.token as string;
}
