/**
 * /audit-log — the audit log of a workspace the person owns (`audit:read`): who changed its set-up,
 * what they did (the server's sentence), when, from which address and in which program, newest
 * first, a page at a time (GET /api/dashboard/workspaces/:id/audit-log). The header links here only
 * for owners; anybody else who opens the address is told that access is missing, without a request
 * the server would refuse. The workspace, the page and the page size live in the address
 * (`?workspace=2&page=3&size=25`).
 */
import { useEffect, useState } from 'preact/hooks';
import { auditActorName, BRAND, ERRORS, formatMessage, type AuditEntry, type DashboardProgram, type DashboardSession, type DashboardWorkspace } from '@reftrack/contract';
import { api, ApiError } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { navigate } from '../lib/router.js';
import { can } from '../lib/roles.js';
import { formatDateTime, plural } from '../lib/format.js';
import { AccessMissing, ErrorNotice, isForbidden, Loading, PageSizeField, Pager } from '../components/ui.js';
import { DataTable } from '../components/data-table.js';

export const AUDIT_PAGE_SIZES = [10, 25, 50, 100];
/** The server's default page size for the audit log (routes/dashboard/audit-log.ts). */
export const AUDIT_DEFAULT_PAGE_SIZE = 50;

export interface AuditView {
  /** The workspace whose log is shown; null when the person belongs to none. */
  workspace: number | null;
  page: number;
  size: number;
}

/** The workspaces whose audit log the person may read. */
export function auditWorkspaces(session: DashboardSession): DashboardWorkspace[] {
  return session.workspaces.filter((w) => can(w.role, 'audit:read'));
}

/** The workspace shown when the address names none: the first one owned, else the first one. */
export function defaultAuditWorkspace(session: DashboardSession): number | null {
  return (auditWorkspaces(session)[0] ?? session.workspaces[0])?.id ?? null;
}

export function auditViewFromQuery(q: URLSearchParams, defaultWorkspace: number | null): AuditView {
  const workspace = q.get('workspace') ?? '';
  const page = Number(q.get('page'));
  const size = Number(q.get('size'));
  return {
    workspace: /^[1-9]\d{0,14}$/.test(workspace) ? Number(workspace) : defaultWorkspace,
    page: Number.isInteger(page) && page > 0 && page <= 100_000 ? page : 1,
    size: AUDIT_PAGE_SIZES.includes(size) ? size : AUDIT_DEFAULT_PAGE_SIZE,
  };
}

export function auditPath(v: AuditView, defaultWorkspace: number | null): string {
  const q = new URLSearchParams();
  if (v.workspace !== null && v.workspace !== defaultWorkspace) q.set('workspace', String(v.workspace));
  if (v.page > 1) q.set('page', String(v.page));
  if (v.size !== AUDIT_DEFAULT_PAGE_SIZE) q.set('size', String(v.size));
  const s = q.toString();
  return `/audit-log${s ? `?${s}` : ''}`;
}

/** What to say at the end of the log, or null before it. */
export function auditEndNote(page: number, rows: number, pagination: { pageCount: number; total: number }): string | null {
  if (pagination.total === 0 || page < pagination.pageCount) return null;
  if (rows === 0 && page > pagination.pageCount) return `This page is past the end: the log holds ${plural(pagination.total, 'entry', 'entries')}.`;
  return `End of the log (${plural(pagination.total, 'entry', 'entries')}).`;
}

/** The refusal the server would answer, said before asking it. */
const notAllowed = () => new ApiError(403, formatMessage(ERRORS.permissionDenied.message, { permission: 'audit:read' }), 'permission_denied');

export function AuditLogPage({ session, query }: { session: DashboardSession; query: URLSearchParams }) {
  useEffect(() => {
    document.title = `Audit log — ${BRAND.name}`;
  }, []);
  const owned = auditWorkspaces(session);
  const fallback = defaultAuditWorkspace(session);
  const v = auditViewFromQuery(query, fallback);
  const workspace = session.workspaces.find((w) => w.id === v.workspace);
  // A workspace the session does not list is asked for anyway: the server answers "not found".
  const allowed = v.workspace !== null && (workspace === undefined || can(workspace.role, 'audit:read'));
  const qs = query.toString();
  const [draft, setDraft] = useState({ workspace: String(v.workspace ?? ''), size: String(v.size) });
  useEffect(() => setDraft({ workspace: String(v.workspace ?? ''), size: String(v.size) }), [qs]);

  const log = useLoad(() => (allowed && v.workspace !== null ? api.auditLog(v.workspace, { page: v.page, pageSize: v.size }) : Promise.resolve(undefined)), [allowed, v.workspace, v.page, v.size]);
  const programs = useLoad(() => (allowed ? api.programs() : Promise.resolve([] as DashboardProgram[])), [allowed]);

  const head = (
    <div class="page-head">
      <h1>Audit log</h1>
      {workspace ? (
        <p class="muted role-line">
          {workspace.name} · workspace {workspace.id}
        </p>
      ) : null}
    </div>
  );
  const what = workspace ? `the audit log of ${workspace.name}` : 'the audit log';
  if (!allowed || isForbidden(log.error)) {
    return (
      <section>
        {head}
        <AccessMissing error={isForbidden(log.error) ? log.error : notAllowed()} what={what} />
      </section>
    );
  }

  function apply(e: Event) {
    e.preventDefault();
    navigate(auditPath({ workspace: draft.workspace ? Number(draft.workspace) : v.workspace, page: 1, size: Number(draft.size) }, fallback));
  }
  const pagination = log.data?.meta.pagination;
  const rows = log.data?.data ?? [];
  // The page of the rows shown: while the next page loads the previous one's rows stay, and the
  // pager and the end note describe them, not the page asked for.
  const shownPage = pagination?.page ?? v.page;
  const note = pagination ? auditEndNote(shownPage, rows.length, pagination) : null;
  const pageLink = (page: number) => auditPath({ ...v, page }, fallback);
  const names = new Map((programs.data ?? []).map((p) => [p.id, p.name]));

  return (
    <section>
      {head}
      <p class="muted">
        Who changed this workspace's set-up — its programs, keys, payment connection, partners, links and agent keys — and when: each action of a signed-in person, an agent key or the
        server operator, newest first, with the address it came from. Clicks, leads and sales are not listed here (see a program's Events). Only the workspace's owners see this page.
      </p>
      <section class="panel" aria-labelledby="audit-title">
        <h2 id="audit-title">Entries</h2>
        <form class="filters compact" onSubmit={apply} noValidate aria-label="Audit log view">
          {owned.length > 1 ? (
            <div class="field">
              <label for="a-workspace">Workspace</label>
              <select id="a-workspace" name="workspace" value={draft.workspace} onChange={(e) => setDraft({ ...draft, workspace: e.currentTarget.value })}>
                {owned.map((w) => (
                  <option value={String(w.id)} key={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <PageSizeField id="a-size" sizes={AUDIT_PAGE_SIZES} value={draft.size} onChange={(size) => setDraft({ ...draft, size })} />
          <div class="filter-actions">
            <button type="submit">Apply</button>
          </div>
        </form>
        <p class="muted small">Times are in your time zone; point at one for its exact UTC time.</p>
        {log.loading && !log.data ? <Loading what="the audit log" /> : null}
        <ErrorNotice error={log.error} />
        {log.data && pagination?.total === 0 ? <p>Nothing has been recorded in this workspace's audit log yet.</p> : null}
        {log.data && pagination && pagination.total > 0 ? <AuditTable entries={rows} programName={(id) => names.get(id)} /> : null}
        {pagination && (pagination.total > 0 || shownPage > 1) ? (
          <Pager label="Audit log pages" page={shownPage} pageCount={pagination.pageCount} total={plural(pagination.total, 'entry', 'entries')} link={pageLink} />
        ) : null}
        {note ? (
          <p class="notice info end-note" role="note">
            {note}
          </p>
        ) : null}
      </section>
    </section>
  );
}

function AuditTable({ entries, programName }: { entries: AuditEntry[]; programName: (id: number) => string | undefined }) {
  if (entries.length === 0) return <p>No entries on this page.</p>;
  return (
    <DataTable label="Audit log table" columns={['When', 'Who', 'What', 'From address', 'Program']} class="audit" cards>
      {entries.map((e) => {
        const name = e.program_id === null ? undefined : programName(e.program_id);
        return (
          <tr key={e.id} role="row">
            <td class="time" role="cell">
              <time dateTime={e.occurred_at} title={e.occurred_at}>
                {formatDateTime(e.occurred_at, { seconds: true })}
              </time>
            </td>
            <td class="actor" role="cell">
              {auditActorName(e.actor)}
            </td>
            <td class="what" role="cell">
              <span class="summary">{e.summary}</span>
              <code class="sub action">{e.action}</code>
            </td>
            <td class="ip" role="cell">
              {e.actor.ip ? <code>{e.actor.ip}</code> : <span class="muted">—</span>}
            </td>
            <td class="program" role="cell">
              {e.program_id === null ? (
                <span class="muted">—</span>
              ) : name ? (
                <a href={`/programs/${e.program_id}/settings`}>{name}</a>
              ) : (
                `Program ${e.program_id}`
              )}
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
