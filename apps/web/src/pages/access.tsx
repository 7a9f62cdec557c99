/**
 * /access — what can act for the signed-in person besides this session: their CLI login tokens
 * (one per `reftrack login`; each person manages their own, across all their workspaces) and, for
 * each workspace they own, its agent keys. Revoking asks for confirmation first and stops the
 * credential at once on every server.
 */
import { useEffect, useState } from 'preact/hooks';
import { BRAND, type DashboardAgentKey, type DashboardCliToken, type DashboardSession, type DashboardWorkspace } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad, type Loaded } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { formatDateTime } from '../lib/format.js';
import { ConfirmDialog, ErrorNotice, Loading, Status } from '../components/ui.js';
import { DataTable } from '../components/data-table.js';

type Pending = { kind: 'cli'; token: DashboardCliToken } | { kind: 'agent'; key: DashboardAgentKey; workspace: DashboardWorkspace; list: Loaded<DashboardAgentKey[]> };

const cliName = (t: DashboardCliToken) => t.label ?? `CLI token ${t.id}`;

export function AccessPage({ session }: { session: DashboardSession }) {
  useEffect(() => {
    document.title = `Access — ${BRAND.name}`;
  }, []);
  const tokens = useLoad(() => api.cliTokens(), []);
  const owned = session.workspaces.filter((w) => can(w.role, 'agent_keys:manage'));
  const [pending, setPending] = useState<Pending | null>(null);
  const [busy, setBusy] = useState(false);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);

  async function revoke() {
    const target = pending;
    setPending(null);
    if (!target) return;
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      if (target.kind === 'cli') {
        const revoked = await api.revokeCliToken(target.token.id);
        tokens.setData((tokens.data ?? []).map((t) => (t.id === revoked.id ? revoked : t)));
        setSaid(`CLI token ${cliName(revoked)} revoked. A terminal that used it must run \`${BRAND.cli} login\` again.`);
      } else {
        const revoked = await api.revokeAgentKey(target.key.id);
        target.list.setData((target.list.data ?? []).map((k) => (k.id === revoked.id ? revoked : k)));
        setSaid(`Agent key ${revoked.name ?? revoked.key_masked ?? revoked.id} of ${target.workspace.name} revoked. The tool that used it is refused from now on.`);
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <div class="page-head">
        <h1>Access</h1>
      </div>
      <p class="muted">
        What can act for you besides this browser session. Revoking one stops it at once, on every server; it cannot be undone, only replaced (sign in again with <code>{BRAND.cli} login</code>,
        or ask the operator for a new agent key).
      </p>
      {said ? <Status>{said}</Status> : null}
      <ErrorNotice error={error} title="Not revoked:" />

      <section class="panel" aria-labelledby="cli-tokens-title">
        <h2 id="cli-tokens-title">CLI tokens</h2>
        <p class="muted">
          Each <code>{BRAND.cli} login</code> creates one, labelled with the client that received it (its User-Agent). <code>{BRAND.cli} logout</code> revokes its own; revoke here a token left on
          a machine you no longer use. Expired tokens are not listed.
        </p>
        {tokens.loading && !tokens.data ? <Loading what="CLI tokens" /> : null}
        <ErrorNotice error={tokens.error} />
        {tokens.data ? <CliTokenTable tokens={tokens.data} busy={busy} onRevoke={(token) => setPending({ kind: 'cli', token })} /> : null}
      </section>

      {owned.map((w) => (
        <AgentKeysSection key={w.id} workspace={w} busy={busy} onRevoke={(key, list) => setPending({ kind: 'agent', key, workspace: w, list })} />
      ))}
      {owned.length === 0 ? <p class="muted">Agent keys of a workspace are listed here for its owners.</p> : null}

      <ConfirmDialog
        open={pending !== null}
        title={pending?.kind === 'agent' ? 'Revoke this agent key?' : 'Revoke this CLI token?'}
        confirmLabel="Revoke"
        danger
        onConfirm={revoke}
        onCancel={() => setPending(null)}
      >
        {pending?.kind === 'cli' ? (
          <p>
            <strong>{cliName(pending.token)}</strong>, signed in {formatDateTime(pending.token.created_at)}, <strong>stops working at once</strong>. The terminal that holds it must run{' '}
            <code>{BRAND.cli} login</code> again.
          </p>
        ) : null}
        {pending?.kind === 'agent' ? (
          <p>
            <strong>{pending.key.name ?? 'The key'}</strong> (<code>{pending.key.key_masked}</code>) of {pending.workspace.name} <strong>stops working at once</strong>. The tool that uses it needs a
            new key from the server operator.
          </p>
        ) : null}
      </ConfirmDialog>
    </section>
  );
}

/** The status cell of a credential: when it was revoked, or the button that revokes it. */
function RevokeCell({ revokedAt, busy, label, onRevoke }: { revokedAt: string | null; busy: boolean; label: string; onRevoke: () => void }) {
  return (
    <td>
      {revokedAt ? (
        <span class="badge warn">Revoked {formatDateTime(revokedAt)}</span>
      ) : (
        <button type="button" class="danger small" disabled={busy} aria-label={label} onClick={onRevoke}>
          Revoke
        </button>
      )}
    </td>
  );
}

function CliTokenTable({ tokens, busy, onRevoke }: { tokens: DashboardCliToken[]; busy: boolean; onRevoke: (t: DashboardCliToken) => void }) {
  if (tokens.length === 0) return <p>No CLI tokens. Run <code>{BRAND.cli} login</code> in a terminal to create one.</p>;
  return (
    <DataTable label="CLI tokens table" columns={['Received by', 'Signed in', 'Last used', 'Expires', 'Status']}>
      {tokens.map((t) => (
        <tr key={t.id} class={t.revoked_at ? 'inactive' : ''}>
          <th scope="row">
            <span class="mono small">{cliName(t)}</span>
          </th>
          <td>{formatDateTime(t.created_at)}</td>
          <td>{t.last_used_at ? formatDateTime(t.last_used_at) : 'never'}</td>
          <td>{formatDateTime(t.expires_at)}</td>
          <RevokeCell revokedAt={t.revoked_at} busy={busy} label={`Revoke CLI token ${cliName(t)}, signed in ${formatDateTime(t.created_at)}`} onRevoke={() => onRevoke(t)} />
        </tr>
      ))}
    </DataTable>
  );
}

function AgentKeysSection({ workspace, busy, onRevoke }: { workspace: DashboardWorkspace; busy: boolean; onRevoke: (key: DashboardAgentKey, list: Loaded<DashboardAgentKey[]>) => void }) {
  const keys = useLoad(() => api.agentKeys(workspace.id), [workspace.id]);
  const titleId = `agent-keys-${workspace.id}`;
  return (
    <section class="panel" aria-labelledby={titleId}>
      <h2 id={titleId}>Agent keys — {workspace.name}</h2>
      <p class="muted">
        Keys of approved tools for the <code>/api/agent/v1</code> API, issued by the server operator (<code>reftrack-server agent-keys create</code>). Only the last characters are shown.
      </p>
      {keys.loading && !keys.data ? <Loading what={`agent keys of ${workspace.name}`} /> : null}
      <ErrorNotice error={keys.error} />
      {keys.data && keys.data.length === 0 ? <p>No agent keys in this workspace.</p> : null}
      {keys.data && keys.data.length > 0 ? (
        <DataTable label={`Agent keys of ${workspace.name} table`} columns={['Name', 'Key', 'Scopes', 'Created', 'Last used', 'Status']}>
          {keys.data.map((k) => (
            <tr key={k.id} class={k.revoked_at ? 'inactive' : ''}>
              <th scope="row">{k.name ?? <span class="muted">unnamed</span>}</th>
              <td>
                <code>{k.key_masked ?? '—'}</code>
              </td>
              <td>{k.scopes.map((scope) => <code key={scope}>{scope} </code>)}</td>
              <td>{formatDateTime(k.created_at)}</td>
              <td>{k.last_used_at ? formatDateTime(k.last_used_at) : 'never'}</td>
              <RevokeCell revokedAt={k.revoked_at} busy={busy} label={`Revoke agent key ${k.name ?? k.key_masked ?? k.id}`} onRevoke={() => onRevoke(k, keys)} />
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
