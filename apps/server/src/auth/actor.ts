/**
 * Who did it, for the audit log (EventActor in the contract): the signed-in account or the agent
 * key of a request, with its client address, or the operator at the server's command line.
 */
import os from 'node:os';
import type { Context } from 'koa';
import type { EventActor } from '@reftrack/contract';

/** The request's credential: a dashboard session or a CLI login token (an account), else an agent key. */
export function requestActor(ctx: Context): EventActor {
  const ip = ctx.ip || null;
  const { account, agent } = ctx.state;
  if (account) return { type: 'account', id: account.accountId, label: account.email, ip };
  if (agent) return { type: 'agent_key', id: agent.keyId, label: null, ip };
  return { type: 'system', id: null, label: null, ip };
}

/** `reftrack-server …` run by the operator: the login of the shell that ran it. */
export function operatorActor(): EventActor {
  let login: string | null = null;
  try {
    login = os.userInfo().username;
  } catch {
    // No passwd entry (some containers): the operator stays unnamed.
  }
  return { type: 'operator', id: null, label: login, ip: null };
}
