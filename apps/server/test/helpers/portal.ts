/** Mail and portal helpers shared by the portal, applications and link-request tests. */
import { expect } from 'vitest';
import type { TestServer } from './test-server.js';
import { linkIn, type TestSmtp } from './smtp.js';

/** Runs the outbox and the mail worker until nothing for `to` is waiting or being sent (the server's own worker runs too). */
export async function settleMail(s: TestServer, to: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await s.running.deps.outbox.drain();
    await s.running.deps.mail.runDue();
    const pending = await s.db('mail_messages').where({ to_address: to }).where((q) => q.whereIn('status', ['queued', 'sending']).orWhere((r) => r.where({ status: 'ready' }).where('next_attempt_at', '<=', s.clock.now()))).count({ n: '*' }).first();
    if (Number(pending?.n ?? 0) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`mail to ${to} never settled`);
}

/** The newest link to `path` that arrived at the SMTP server for `to`. */
export async function mailTo(s: TestServer, smtp: TestSmtp, to: string, path: string): Promise<string> {
  await settleMail(s, to);
  const mail = [...smtp.messages].reverse().find((m) => m.to.includes(to));
  expect(mail, `no mail to ${to}`).toBeDefined();
  return linkIn(mail!, path);
}

export const tokenOf = (link: string): string => new URL(link).searchParams.get('token')!;
export const cookieOf = (res: { headers: Headers }): Record<string, string> => ({ cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]! });

/** A JSON write with the given headers (cookie), any method. */
export const send = (s: TestServer, method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  s.raw(path, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });

/**
 * The workspace's audit entries once one matches `wanted`: the outbox is drained until it does, at
 * most 500 rounds. On PostgreSQL the outbox reads only events older than every running transaction
 * (pg_snapshot_xmin, which is cluster-wide), so on a shared server another database's long
 * transaction holds them back for a while.
 */
export async function auditEntries(s: TestServer, who: Record<string, string>, wanted: (e: { action: string; summary: string }) => boolean, workspace = 1): Promise<Array<{ action: string; summary: string }>> {
  let entries: Array<{ action: string; summary: string }> = [];
  for (let i = 0; i < 500; i++) {
    await s.running.deps.outbox.drain();
    entries = (await s.get(`/api/dashboard/workspaces/${workspace}/audit-log?pageSize=100`, who)).body.data;
    if (entries.some(wanted)) return entries;
    await new Promise((r) => setTimeout(r, 20));
  }
  return entries;
}
