/**
 * The partners page's portal sections (docs/partners.md): whether the program takes applications
 * and link requests, its public application page, and the pending applications and link requests
 * the owner approves or declines.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { DashboardApplication, DashboardProgram, LinkRequestView } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { formatDateTime } from '../lib/format.js';
import { CopyButton, ErrorNotice, Loading, Status } from '../components/ui.js';
import { DataTable, type ColumnSpec } from '../components/data-table.js';

export function PortalSettingsPanel({ program, mayWrite }: { program: DashboardProgram; mayWrite: boolean }) {
  const settings = useLoad(() => api.portalSettings(program.id), [program.id]);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function change(next: { applications_open: boolean; link_requests_open: boolean }) {
    const before = settings.data!;
    // The box shows the new state at once; it goes back if the server refuses.
    settings.setData({ ...before, ...next });
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      const saved = await api.savePortalSettings(program.id, next);
      settings.setData(saved);
      setSaid(`Applications ${saved.applications_open ? 'open' : 'closed'}; link requests ${saved.link_requests_open ? 'allowed' : 'not allowed'}.`);
    } catch (err) {
      settings.setData(before);
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const s = settings.data;
  return (
    <section class="panel" aria-labelledby="portal-settings-title">
      <h2 id="portal-settings-title">Partner portal settings</h2>
      {settings.loading && !s ? <Loading what="the portal settings" /> : null}
      <ErrorNotice error={settings.error} />
      {s ? (
        <div class="stack">
          <label class="check">
            <input type="checkbox" checked={s.applications_open} disabled={!mayWrite || busy} onChange={(e) => change({ applications_open: e.currentTarget.checked, link_requests_open: s.link_requests_open })} />{' '}
            Open for applications: a public page takes applications to become a partner
          </label>
          <label class="check">
            <input type="checkbox" checked={s.link_requests_open} disabled={!mayWrite || busy} onChange={(e) => change({ applications_open: s.applications_open, link_requests_open: e.currentTarget.checked })} />{' '}
            Partners may request more referral links in their portal
          </label>
          {s.apply_url ? (
            <p>
              Application page: <code class="link-url">{s.apply_url}</code> <CopyButton text={s.apply_url} what="the application page link" />
              {s.applications_open ? null : <span class="sub"> (closed: the page says so)</span>}
            </p>
          ) : null}
          {said ? <Status>{said}</Status> : null}
          <ErrorNotice error={error} />
        </div>
      ) : null}
    </section>
  );
}

/** One pending item's decline form: an optional reason (and, for applications, whether to e-mail it). */
function DeclineForm({ what, withNotify, onDecline, onCancel }: { what: string; withNotify: boolean; onDecline: (reason: string, notify: boolean) => Promise<void>; onCancel: () => void }) {
  const [reason, setReason] = useState('');
  const [notify, setNotify] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  // The form opens from a row's Decline button: the keyboard continues in it.
  useEffect(() => ref.current?.focus(), []);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await onDecline(reason, notify);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  return (
    <form class="stack inline-form" onSubmit={submit} noValidate aria-label={`Decline ${what}`}>
      <div class="field">
        <label for="decline-reason">Reason for declining {what} (optional)</label>
        <textarea id="decline-reason" ref={ref} maxLength={500} rows={2} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      </div>
      {withNotify ? (
        <label class="check">
          <input type="checkbox" checked={notify} onChange={(e) => setNotify(e.currentTarget.checked)} /> E-mail the applicant that the application was declined (with the reason)
        </label>
      ) : null}
      <div class="actions">
        <button type="submit" class="danger" disabled={busy}>
          Decline
        </button>{' '}
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <ErrorNotice error={error} />
    </form>
  );
}

/**
 * Pending items the owner approves or declines, one table: the load, the busy row, the message,
 * the open decline form. `approve` and `decline` run the call and answer the sentence to show.
 */
function PendingSection<T extends { id: number }>(props: {
  id: string;
  title: string;
  empty: string;
  regionLabel: string;
  mayWrite: boolean;
  load: () => Promise<T[]>;
  deps: unknown[];
  columns: ColumnSpec[];
  cells: (item: T) => ComponentChildren;
  name: (item: T) => string;
  withNotify: boolean;
  approve: (item: T) => Promise<string>;
  decline: (item: T, reason: string, notify: boolean) => Promise<string>;
}) {
  const list = useLoad(props.load, props.deps);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [declining, setDeclining] = useState<T | null>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const remove = (id: number) => list.setData((list.data ?? []).filter((x) => x.id !== id));
  async function approve(item: T) {
    if (busy !== null) return;
    setBusy(item.id);
    setError(null);
    try {
      const sentence = await props.approve(item);
      remove(item.id);
      setSaid(sentence);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  }
  async function decline(item: T, reason: string, notify: boolean) {
    const sentence = await props.decline(item, reason, notify);
    remove(item.id);
    setDeclining(null);
    setSaid(sentence);
  }
  const rows = list.data ?? [];
  return (
    <section class="panel" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {list.loading && !list.data ? <Loading what={props.title.toLowerCase()} /> : null}
      <ErrorNotice error={list.error} />
      {list.data && rows.length === 0 ? <p>{props.empty}</p> : null}
      {rows.length > 0 ? (
        <DataTable label={props.regionLabel} columns={[...props.columns, props.mayWrite && 'Decision']}>
          {rows.map((item) => (
            <tr key={item.id}>
              {props.cells(item)}
              {props.mayWrite ? (
                <td>
                  <button type="button" class="small" aria-label={`Approve ${props.name(item)}`} onClick={() => approve(item)} disabled={busy === item.id}>
                    Approve
                  </button>{' '}
                  <button type="button" class="secondary small" aria-label={`Decline ${props.name(item)}`} aria-expanded={declining?.id === item.id} onClick={() => setDeclining(item)}>
                    Decline…
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </DataTable>
      ) : null}
      {declining ? <DeclineForm key={declining.id} what={props.name(declining)} withNotify={props.withNotify} onDecline={(r, n) => decline(declining, r, n)} onCancel={() => setDeclining(null)} /> : null}
      {said ? <Status>{said}</Status> : null}
      <ErrorNotice error={error} />
    </section>
  );
}

export function ApplicationsPanel({ program, mayWrite, onApproved }: { program: DashboardProgram; mayWrite: boolean; onApproved: () => void }) {
  return (
    <PendingSection<DashboardApplication>
      id="applications"
      title="Applications"
      empty="No applications waiting."
      regionLabel="Applications waiting for a decision"
      mayWrite={mayWrite}
      load={() => api.applications(program.id)}
      deps={[program.id]}
      columns={['Applicant', 'Website', 'How they will promote', 'Applied']}
      cells={(a) => (
        <>
          <th scope="row">
            {a.name}
            <span class="sub money-line">{a.email}</span>
            {a.existing_partner_id ? <span class="sub money-line">already a partner of this workspace</span> : null}
          </th>
          <td>{a.website ? <span class="url">{a.website}</span> : '—'}</td>
          <td class="prose-cell">{a.promotion}</td>
          <td>{formatDateTime(a.created_at)}</td>
        </>
      )}
      name={(a) => a.name}
      withNotify
      approve={async (a) => {
        const done = await api.approveApplication(a.id);
        onApproved();
        return `${a.name} approved: partner created with the link ${done.link.short_link}, and an invitation sent to ${a.email}.`;
      }}
      decline={async (a, reason, notify) => {
        await api.declineApplication(a.id, { reason, notify });
        return `The application of ${a.name} was declined${notify ? ' and the applicant told by e-mail' : ''}.`;
      }}
    />
  );
}

export function LinkRequestsPanel({ program, mayWrite, onApproved }: { program: DashboardProgram; mayWrite: boolean; onApproved: () => void }) {
  // The short link each request is approved as, when the owner names another than the one asked for.
  const [overrides, setOverrides] = useState<Record<number, string>>({});
  return (
    <PendingSection<LinkRequestView>
      id="link-requests"
      title="Link requests"
      empty="No link requests waiting."
      regionLabel="Link requests waiting for a decision"
      mayWrite={mayWrite}
      load={() => api.linkRequests(program.id)}
      deps={[program.id]}
      columns={['Partner', 'Short link asked for', 'Note', 'Asked', mayWrite && 'Create as (optional)']}
      cells={(r) => (
        <>
          <th scope="row">
            {r.partner_name} <code>{r.partner_code}</code>
          </th>
          <td>{r.short_link ? <code>{r.short_link}</code> : <span class="sub">any (made from the partner code)</span>}</td>
          <td class="prose-cell">{r.note ?? '—'}</td>
          <td>{formatDateTime(r.created_at)}</td>
          {mayWrite ? (
            <td>
              <input
                type="text"
                aria-label={`Short link to create for the link request of ${r.partner_name} (empty: the one asked for)`}
                placeholder={r.short_link ?? 'from the partner code'}
                maxLength={200}
                value={overrides[r.id] ?? ''}
                onInput={(e) => setOverrides({ ...overrides, [r.id]: e.currentTarget.value })}
              />
            </td>
          ) : null}
        </>
      )}
      name={(r) => `the link request of ${r.partner_name}`}
      withNotify={false}
      approve={async (r) => {
        const done = await api.approveLinkRequest(r.id, overrides[r.id]?.trim() || undefined);
        onApproved();
        return `Link ${done.link.short_link} created for ${r.partner_name}.`;
      }}
      decline={async (r, reason) => {
        await api.declineLinkRequest(r.id, { reason });
        return `The link request of ${r.partner_name} was declined.`;
      }}
    />
  );
}
