import { describe, expect, it } from 'vitest';
import { auditActorName, type DashboardSession } from '@reftrack/contract';
import { auditEndNote, auditPath, auditViewFromQuery, auditWorkspaces, defaultAuditWorkspace } from '../src/pages/audit-log.js';

const session = (roles: Array<['owner' | 'member' | 'restricted', number]>): DashboardSession => ({
  account: { id: 1, email: 'a@example.test', name: null },
  workspaces: roles.map(([role, id]) => ({ id, name: `W${id}`, role })),
});

describe('audit log view in the address', () => {
  it('reads and writes workspace, page and size, dropping defaults and junk', () => {
    const v = auditViewFromQuery(new URLSearchParams('workspace=3&page=2&size=25'), 1);
    expect(v).toEqual({ workspace: 3, page: 2, size: 25 });
    expect(auditPath(v, 1)).toBe('/audit-log?workspace=3&page=2&size=25');
    expect(auditViewFromQuery(new URLSearchParams('workspace=x&page=-1&size=7'), 1)).toEqual({ workspace: 1, page: 1, size: 50 });
    expect(auditPath({ workspace: 1, page: 1, size: 50 }, 1)).toBe('/audit-log');
    expect(auditViewFromQuery(new URLSearchParams(''), null)).toEqual({ workspace: null, page: 1, size: 50 });
  });

  it('defaults to the first workspace the person owns', () => {
    const s = session([['member', 1], ['owner', 2], ['owner', 3]]);
    expect(auditWorkspaces(s).map((w) => w.id)).toEqual([2, 3]);
    expect(defaultAuditWorkspace(s)).toBe(2);
    expect(defaultAuditWorkspace(session([['member', 4]]))).toBe(4);
    expect(auditWorkspaces(session([['member', 4], ['restricted', 5]]))).toEqual([]);
    expect(defaultAuditWorkspace(session([]))).toBeNull();
  });
});

describe('the end of the log', () => {
  it('says nothing before the last page or when the log is empty', () => {
    expect(auditEndNote(1, 10, { pageCount: 3, total: 23 })).toBeNull();
    expect(auditEndNote(1, 0, { pageCount: 0, total: 0 })).toBeNull();
  });
  it('marks the end and a page past it', () => {
    expect(auditEndNote(3, 3, { pageCount: 3, total: 23 })).toBe('End of the log (23 entries).');
    expect(auditEndNote(1, 1, { pageCount: 1, total: 1 })).toBe('End of the log (1 entry).');
    expect(auditEndNote(9, 0, { pageCount: 3, total: 23 })).toBe('This page is past the end: the log holds 23 entries.');
  });
});

describe('who did it', () => {
  it('names accounts, agent keys, the operator and the system as the sentences do', () => {
    expect(auditActorName({ type: 'account', id: 4, label: 'olga@globex.test', ip: null })).toBe('olga@globex.test');
    expect(auditActorName({ type: 'account', id: 4, label: null, ip: null })).toBe('Account 4');
    expect(auditActorName({ type: 'agent_key', id: 5, label: 'sync bot', ip: null })).toBe('Agent key 5 (sync bot)');
    expect(auditActorName({ type: 'agent_key', id: 5, label: null, ip: null })).toBe('Agent key 5');
    expect(auditActorName({ type: 'operator', id: null, label: 'ops', ip: null })).toBe('The operator (ops)');
    expect(auditActorName({ type: 'operator', id: null, label: null, ip: null })).toBe('The operator');
    expect(auditActorName({ type: 'system', id: null, label: null, ip: null })).toBe('Reftrack');
  });
});
