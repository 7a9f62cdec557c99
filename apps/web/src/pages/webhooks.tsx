/**
 * /webhooks — a workspace's outbound webhook endpoints, for its owners (`webhooks:manage`,
 * docs/webhooks.md): create one (its signing secret is shown once, here), switch it on and off,
 * rotate its secret (the old one signs 24 h more), send a test event, delete it; and each
 * endpoint's delivery log with "Resend". An endpoint Reftrack disabled after 3 days of failures is
 * announced at the top. The workspace lives in the address (`?workspace=2`).
 */
import { useEffect, useState } from 'preact/hooks';
import {
  BRAND,
  ERRORS,
  formatMessage,
  PARTNER_WEBHOOK_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
  type DashboardProgram,
  type DashboardSession,
  type WebhookDelivery,
  type WebhookEndpoint,
} from '@reftrack/contract';
import { api, ApiError } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { formatDateTime } from '../lib/format.js';
import { AccessMissing, ConfirmDialog, CopyButton, ErrorNotice, isForbidden, Loading, Notice, Status } from '../components/ui.js';
import { DataTable } from '../components/data-table.js';

/** The workspaces whose endpoints the person may manage. */
export const webhookWorkspaces = (session: DashboardSession) => session.workspaces.filter((w) => can(w.role, 'webhooks:manage'));

/** The workspace named by the address, else the first one owned. */
export function webhookWorkspaceFromQuery(q: URLSearchParams, session: DashboardSession): number | null {
  const w = q.get('workspace') ?? '';
  if (/^[1-9]\d{0,14}$/.test(w)) return Number(w);
  return (webhookWorkspaces(session)[0] ?? session.workspaces[0])?.id ?? null;
}

/** An endpoint's state in words. */
export function endpointState(e: WebhookEndpoint): string {
  if (e.disabled_reason === 'failing') return 'Disabled by Reftrack: failing';
  if (!e.enabled) return 'Disabled';
  if (e.failing_since) return `Enabled · failing since ${formatDateTime(e.failing_since)}`;
  return 'Enabled';
}

/** A delivery's outcome in words, for the log's status column. */
export function deliveryOutcome(d: WebhookDelivery): string {
  if (d.status === 'succeeded') return 'Delivered';
  if (d.status === 'failed') return 'Failed (retries over)';
  return d.attempts === 0 ? 'Queued' : 'Retrying';
}

const notAllowed = () => new ApiError(403, formatMessage(ERRORS.permissionDenied.message, { permission: 'webhooks:manage' }), 'permission_denied');

type Pending = { kind: 'rotate' | 'delete'; endpoint: WebhookEndpoint };

export function WebhooksPage({ session, query }: { session: DashboardSession; query: URLSearchParams }) {
  useEffect(() => {
    document.title = `Webhooks — ${BRAND.name}`;
  }, []);
  const owned = webhookWorkspaces(session);
  const workspaceId = webhookWorkspaceFromQuery(query, session);
  const workspace = session.workspaces.find((w) => w.id === workspaceId);
  const allowed = workspaceId !== null && (workspace === undefined || can(workspace.role, 'webhooks:manage'));
  const endpoints = useLoad(() => (allowed && workspaceId !== null ? api.webhooks(workspaceId) : Promise.resolve([] as WebhookEndpoint[])), [allowed, workspaceId]);
  const programs = useLoad(() => (allowed ? api.programs() : Promise.resolve([] as DashboardProgram[])), [allowed]);
  const [secret, setSecret] = useState<{ endpoint: WebhookEndpoint; secret: string; rotated: boolean } | null>(null);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<Pending | null>(null);
  const [logOf, setLogOf] = useState<number | null>(null);

  const head = (
    <div class="page-head">
      <h1>Webhooks</h1>
      {workspace ? (
        <p class="muted role-line">
          {workspace.name} · workspace {workspace.id}
        </p>
      ) : null}
    </div>
  );
  if (!allowed || isForbidden(endpoints.error)) {
    return (
      <section>
        {head}
        <AccessMissing error={isForbidden(endpoints.error) ? endpoints.error : notAllowed()} what={workspace ? `the webhooks of ${workspace.name}` : 'webhooks'} />
      </section>
    );
  }

  async function act(what: () => Promise<void>) {
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      await what();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const replace = (e: WebhookEndpoint) => endpoints.setData((endpoints.data ?? []).map((x) => (x.id === e.id ? e : x)));
  const names = new Map((programs.data ?? []).map((p) => [p.id, p.name]));
  const failing = (endpoints.data ?? []).filter((e) => e.disabled_reason === 'failing');

  async function confirm() {
    const p = pending;
    setPending(null);
    if (!p) return;
    await act(async () => {
      if (p.kind === 'rotate') {
        const rotated = await api.rotateWebhookSecret(p.endpoint.id);
        const { secret: s, ...view } = rotated;
        replace(view);
        setSecret({ endpoint: view, secret: s, rotated: true });
      } else {
        await api.deleteWebhook(p.endpoint.id);
        endpoints.setData((endpoints.data ?? []).filter((x) => x.id !== p.endpoint.id));
        if (logOf === p.endpoint.id) setLogOf(null);
        setSaid(`Endpoint ${p.endpoint.url} deleted with its delivery log.`);
      }
    });
  }

  return (
    <section>
      {head}
      <p class="muted">
        Reftrack sends each event you subscribe to — leads, sales, commissions, refunds, partners, links — to your endpoints as a signed HTTPS POST (Standard Webhooks), retrying for 3 days until
        your endpoint answers 2xx. See the webhooks guide for payloads and how to verify them.
      </p>
      {owned.length > 1 ? (
        <p>
          Workspace:{' '}
          {owned.map((w) => (
            <a key={w.id} href={`/webhooks?workspace=${w.id}`} aria-current={w.id === workspaceId ? 'page' : undefined} class="tab-link">
              {w.name}
            </a>
          ))}
        </p>
      ) : null}
      {failing.map((e) => (
        <Notice kind="warn" key={e.id}>
          Reftrack disabled the endpoint <code>{e.url}</code> on {e.disabled_at ? formatDateTime(e.disabled_at) : 'its last attempt'}: every delivery failed since{' '}
          {e.failing_since ? formatDateTime(e.failing_since) : 'three days before'}. Fix the receiver, then enable it again; queued deliveries resume.
        </Notice>
      ))}
      {said ? <Status>{said}</Status> : null}
      <ErrorNotice error={error} title="Not done:" />
      {secret ? (
        <section class="panel secret" aria-labelledby="secret-title">
          <h2 id="secret-title">{secret.rotated ? 'New signing secret' : 'Signing secret'}</h2>
          <p>
            The signing secret of <code>{secret.endpoint.url}</code>. <strong>It is shown only now</strong>: store it where your receiver reads it.
            {secret.rotated ? ' The previous secret keeps signing alongside it for 24 hours, so switch your receiver within that time.' : ''}
          </p>
          <p>
            <code class="secret-value">{secret.secret}</code> <CopyButton text={secret.secret} what="the signing secret" />
          </p>
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </section>
      ) : null}

      <section class="panel" aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        {endpoints.loading && !endpoints.data ? <Loading what="endpoints" /> : null}
        <ErrorNotice error={endpoints.error} />
        {endpoints.data && endpoints.data.length === 0 ? <p>No endpoints yet: add one below.</p> : null}
        {endpoints.data && endpoints.data.length > 0 ? (
          <DataTable label="Webhook endpoints" columns={['URL', 'Events', 'Scope', 'State', 'Actions']} cards>
            {endpoints.data.map((e) => (
              <tr key={e.id} role="row">
                <td>
                  <code>{e.url}</code>
                  {e.description ? <span class="sub">{e.description}</span> : null}
                </td>
                <td>{e.event_types.join(', ')}</td>
                <td>
                  {e.program_id === null ? 'All programs' : (names.get(e.program_id) ?? `Program ${e.program_id}`)}
                  {e.partner_id !== null ? <span class="sub">Postback of partner {e.partner_id}</span> : null}
                </td>
                <td>{endpointState(e)}</td>
                <td class="actions">
                  <button type="button" class="secondary small" disabled={busy} onClick={() => act(async () => replace(await api.updateWebhook(e.id, { enabled: !e.enabled })))}>
                    {e.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button
                    type="button"
                    class="secondary small"
                    disabled={busy}
                    onClick={() =>
                      act(async () => {
                        await api.testWebhook(e.id);
                        setSaid(`Test event queued for ${e.url}: see its delivery log.`);
                        setLogOf(e.id);
                      })
                    }
                  >
                    Send test event
                  </button>
                  <button type="button" class="secondary small" onClick={() => setLogOf(logOf === e.id ? null : e.id)} aria-expanded={logOf === e.id}>
                    Delivery log
                  </button>
                  <button type="button" class="secondary small" disabled={busy} onClick={() => setPending({ kind: 'rotate', endpoint: e })}>
                    Rotate secret
                  </button>
                  <button type="button" class="danger small" disabled={busy} onClick={() => setPending({ kind: 'delete', endpoint: e })}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>

      {logOf !== null ? <DeliveryLog endpointId={logOf} url={endpoints.data?.find((e) => e.id === logOf)?.url ?? ''} /> : null}

      {workspaceId !== null ? (
        <CreateEndpoint
          workspaceId={workspaceId}
          programs={programs.data ?? []}
          onCreated={(created) => {
            const { secret: s, ...view } = created;
            endpoints.setData([...(endpoints.data ?? []), view]);
            setSecret({ endpoint: view, secret: s, rotated: false });
          }}
        />
      ) : null}

      <ConfirmDialog
        open={pending !== null}
        title={pending?.kind === 'rotate' ? 'Rotate the signing secret?' : 'Delete this endpoint?'}
        confirmLabel={pending?.kind === 'rotate' ? 'Rotate secret' : 'Delete endpoint'}
        danger={pending?.kind === 'delete'}
        onConfirm={confirm}
        onCancel={() => setPending(null)}
      >
        <p>
          {pending?.kind === 'rotate'
            ? 'A new secret is made and shown once. The current one keeps signing alongside it for 24 hours, then stops.'
            : 'Deliveries to it stop at once, and its delivery log is deleted. This cannot be undone.'}
        </p>
        <p>
          <code>{pending?.endpoint.url}</code>
        </p>
      </ConfirmDialog>
    </section>
  );
}

function CreateEndpoint({ workspaceId, programs, onCreated }: { workspaceId: number; programs: DashboardProgram[]; onCreated: (e: Awaited<ReturnType<typeof api.createWebhook>>) => void }) {
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState<string[]>(['sale.created']);
  const [program, setProgram] = useState('');
  const [partner, setPartner] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const offered: readonly string[] = partner ? PARTNER_WEBHOOK_EVENT_TYPES : WEBHOOK_EVENT_TYPES;

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const created = await api.createWebhook(workspaceId, {
        url: url.trim(),
        event_types: types.filter((t) => offered.includes(t)),
        program_id: program ? Number(program) : null,
        partner_id: partner ? Number(partner) : null,
        description: description.trim() || null,
      });
      onCreated(created);
      setUrl('');
      setDescription('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="panel" aria-labelledby="create-title">
      <h2 id="create-title">Add an endpoint</h2>
      <ErrorNotice error={error} title="Not created:" />
      <form onSubmit={submit} noValidate aria-label="Add a webhook endpoint">
        <div class="field">
          <label for="wh-url">URL</label>
          <input id="wh-url" name="url" type="url" required placeholder="https://example.com/reftrack" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </div>
        <fieldset class="field">
          <legend>Events</legend>
          {offered.map((t) => (
            <label key={t} class="check">
              <input type="checkbox" name="event_types" value={t} checked={types.includes(t)} onChange={(e) => setTypes(e.currentTarget.checked ? [...types, t] : types.filter((x) => x !== t))} />{' '}
              <code>{t}</code>
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="wh-program">Program</label>
          <select id="wh-program" name="program_id" value={program} onChange={(e) => setProgram(e.currentTarget.value)}>
            <option value="">All programs of the workspace</option>
            {programs.map((p) => (
              <option key={p.id} value={String(p.id)}>
                {p.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="wh-partner">Partner postback (optional)</label>
          <input id="wh-partner" name="partner_id" inputMode="numeric" placeholder="Partner id" value={partner} onInput={(e) => setPartner(e.currentTarget.value.replace(/\D/g, ''))} />
          <p class="hint muted small">For a partner: only that partner's leads, sales and commissions, without customer keys. Give the partner the secret.</p>
        </div>
        <div class="field">
          <label for="wh-description">Description</label>
          <input id="wh-description" name="description" maxLength={200} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={busy}>
          Add endpoint
        </button>
      </form>
    </section>
  );
}

function DeliveryLog({ endpointId, url }: { endpointId: number; url: string }) {
  const [page, setPage] = useState(1);
  const log = useLoad(() => api.webhookDeliveries(endpointId, { page, pageSize: 25 }), [endpointId, page]);
  const [error, setError] = useState<unknown>(null);
  const pagination = log.data?.meta.pagination;
  return (
    <section class="panel" aria-labelledby="log-title">
      <h2 id="log-title">Delivery log</h2>
      <p class="muted">
        <code>{url}</code> · newest first ·{' '}
        <button type="button" class="secondary small" onClick={() => log.reload()}>
          Refresh
        </button>
      </p>
      {log.loading && !log.data ? <Loading what="the delivery log" /> : null}
      <ErrorNotice error={log.error ?? error} />
      {log.data && log.data.data.length === 0 ? <p>Nothing delivered yet.</p> : null}
      {log.data && log.data.data.length > 0 ? (
        <DataTable label="Delivery log table" columns={['Event', 'Status', 'Attempt', 'Response', 'Duration', 'Next retry', '']} cards>
          {log.data.data.map((d) => (
            <tr key={d.id} role="row">
              <td>
                <code>{d.event_type}</code>
                <span class="sub">
                  <code>{d.message_id}</code> · {formatDateTime(d.created_at, { seconds: true })}
                </span>
              </td>
              <td>{deliveryOutcome(d)}</td>
              <td>{d.attempts}</td>
              <td>
                {d.last_attempt ? (d.last_attempt.status_code ?? '—') : '—'}
                {d.last_attempt?.error ? <span class="sub">{d.last_attempt.error}</span> : null}
                {d.last_attempt?.response_body ? (
                  <details>
                    <summary>Body (first KiB)</summary>
                    <pre>{d.last_attempt.response_body}</pre>
                  </details>
                ) : null}
              </td>
              <td>{d.last_attempt?.duration_ms != null ? `${d.last_attempt.duration_ms} ms` : '—'}</td>
              <td>{d.next_attempt_at ? formatDateTime(d.next_attempt_at, { seconds: true }) : '—'}</td>
              <td>
                <button
                  type="button"
                  class="secondary small"
                  onClick={() =>
                    api.resendDelivery(d.id).then(
                      () => log.reload(),
                      (err: unknown) => setError(err),
                    )
                  }
                >
                  Resend
                </button>
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
      {pagination && pagination.pageCount > 1 ? (
        <p>
          <button type="button" class="secondary small" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            ← Newer
          </button>{' '}
          Page {page} of {pagination.pageCount}{' '}
          <button type="button" class="secondary small" disabled={page >= pagination.pageCount} onClick={() => setPage(page + 1)}>
            Older →
          </button>
        </p>
      ) : null}
    </section>
  );
}
