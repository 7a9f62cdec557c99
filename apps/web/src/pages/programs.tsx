/** /programs — the programs of every workspace the person belongs to, and a form to create one. */
import { useEffect, useState } from 'preact/hooks';
import { BRAND } from '@reftrack/contract';
import { api } from '../lib/api.js';
import type { DashboardSession } from '@reftrack/contract';
import { useLoad } from '../lib/use-load.js';
import { navigate } from '../lib/router.js';
import { can, ROLE_LABELS } from '../lib/roles.js';
import { describeCommission } from '../lib/format.js';
import { ErrorNotice, Loading } from '../components/ui.js';
import { emptyProgramForm, ProgramFormView } from '../components/program-form.js';

export function ProgramsPage({ session }: { session: DashboardSession }) {
  useEffect(() => {
    document.title = `Programs — ${BRAND.name}`;
  }, []);
  const programs = useLoad(() => api.programs(), []);
  const owned = session.workspaces.filter((w) => can(w.role, 'programs:write'));
  const [workspaceId, setWorkspaceId] = useState<number | undefined>(owned[0]?.id);
  const [showForm, setShowForm] = useState(false);
  const list = programs.data ?? [];
  const workspaceName = (id: number | null) => session.workspaces.find((w) => w.id === id)?.name ?? '';

  return (
    <section>
      <div class="page-head">
        <h1>Programs</h1>
        {owned.length > 0 && list.length > 0 && !showForm ? (
          <button type="button" onClick={() => setShowForm(true)}>
            New program
          </button>
        ) : null}
      </div>
      {programs.loading && !programs.data ? <Loading what="programs" /> : null}
      <ErrorNotice error={programs.error} />
      {programs.data && list.length === 0 ? <p>No programs yet. {owned.length ? 'Create your first one below.' : 'Ask a workspace owner to add you to a program.'}</p> : null}
      {list.length > 0 ? (
        <ul class="cards" aria-label="Your programs">
          {list.map((p) => (
            <li key={p.id} class="card">
              <h2>
                <a href={`/programs/${p.id}/settings`}>{p.name}</a>
              </h2>
              <p class="muted">
                {p.domain} · program {p.id}
              </p>
              <dl class="facts">
                <div>
                  <dt>Commission</dt>
                  <dd>{describeCommission(p.commission_type, p.commission_rate)}</dd>
                </div>
                <div>
                  <dt>Window</dt>
                  <dd>{p.attribution_window_days} days</dd>
                </div>
                <div>
                  <dt>Leads</dt>
                  <dd>
                    <code>{p.lead_auth}</code>
                  </dd>
                </div>
                <div>
                  <dt>Your role</dt>
                  <dd>
                    {p.role ? ROLE_LABELS[p.role] : '—'}
                    {session.workspaces.length > 1 ? ` · ${workspaceName(p.advertiser_id)}` : ''}
                  </dd>
                </div>
              </dl>
              {p.key_rotation ? <p class="badge warn">Key marked for rotation</p> : null}
              <nav aria-label={`${p.name} pages`} class="card-links">
                <a href={`/programs/${p.id}/partners`}>Partners &amp; links</a>
                <a href={`/programs/${p.id}/events`}>Events</a>
                <a href={`/programs/${p.id}/readiness`}>Readiness</a>
              </nav>
            </li>
          ))}
        </ul>
      ) : null}
      {owned.length > 0 && (showForm || (programs.data && list.length === 0)) ? (
        <section class="panel" aria-labelledby="new-program">
          <h2 id="new-program">Create a program</h2>
          <p class="muted">The program's API key is created with it but not shown: generate one on the program's settings page when you are ready to integrate.</p>
          <ProgramFormView
            idPrefix="new"
            initial={emptyProgramForm()}
            submitLabel="Create program"
            extra={
              owned.length > 1 ? (
                <div class="field">
                  <label for="new-workspace">Workspace</label>
                  <select id="new-workspace" value={String(workspaceId)} onChange={(e) => setWorkspaceId(Number(e.currentTarget.value))}>
                    {owned.map((w) => (
                      <option value={String(w.id)} key={w.id}>
                        {w.name}
                      </option>
                    ))}
                  </select>
                </div>
              ) : null
            }
            onSubmit={async (fields) => {
              const created = await api.createProgram({ ...fields, workspace_id: workspaceId });
              navigate(`/programs/${created.id}/settings?created=1`);
            }}
          />
        </section>
      ) : null}
    </section>
  );
}
