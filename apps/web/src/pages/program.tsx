/** /programs/:id/:tab — one program: its name, the tabs, and the tab's page. */
import { useEffect } from 'preact/hooks';
import { BRAND } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { ROLE_LABELS } from '../lib/roles.js';
import { ErrorNotice, Loading } from '../components/ui.js';
import { SettingsTab } from './settings.js';
import { PartnersTab } from './partners.js';
import { PaymentsTab } from './payments.js';
import { EventsTab } from './events.js';
import { ReadinessTab } from './readiness.js';
import { CommissionsTab } from './commissions.js';
import { PayoutsTab } from './payouts.js';

export const PROGRAM_TABS = [
  { id: 'settings', label: 'Settings & key' },
  { id: 'partners', label: 'Partners & links' },
  { id: 'payments', label: 'Payments' },
  { id: 'commissions', label: 'Commissions' },
  { id: 'payouts', label: 'Payouts' },
  { id: 'events', label: 'Events' },
  { id: 'readiness', label: 'Readiness' },
] as const;
export type ProgramTab = (typeof PROGRAM_TABS)[number]['id'];

export function ProgramPage({ id, tab, query }: { id: number; tab: ProgramTab; query: URLSearchParams }) {
  const program = useLoad(() => api.program(id), [id]);
  const p = program.data?.id === id ? program.data : undefined;
  const tabLabel = PROGRAM_TABS.find((t) => t.id === tab)!.label;
  useEffect(() => {
    document.title = `${tabLabel}${p ? ` — ${p.name}` : ''} — ${BRAND.name}`;
  }, [tabLabel, p?.name]);

  if (!p) {
    return (
      <section>
        <p class="crumbs">
          <a href="/programs">Programs</a>
        </p>
        {program.loading ? <Loading what="the program" /> : <h1>Program {id}</h1>}
        <ErrorNotice error={program.error} />
      </section>
    );
  }

  return (
    <section>
      <p class="crumbs">
        <a href="/programs">Programs</a> <span aria-hidden="true">/</span> {p.name}
      </p>
      <div class="page-head">
        <h1>
          {p.name} <span class="muted small-title">{tabLabel}</span>
        </h1>
        <p class="muted role-line">
          {p.domain} · program {p.id}
          {p.role ? ` · your role: ${ROLE_LABELS[p.role]}` : ''}
        </p>
      </div>
      <nav class="tabs" aria-label="Program pages">
        {PROGRAM_TABS.map((t) => (
          <a key={t.id} href={`/programs/${id}/${t.id}`} aria-current={t.id === tab ? 'page' : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      <div class="tab-body">
        {tab === 'settings' ? <SettingsTab program={p} onChange={program.setData} reload={program.reload} created={query.get('created') === '1'} /> : null}
        {tab === 'partners' ? <PartnersTab program={p} /> : null}
        {tab === 'payments' ? <PaymentsTab program={p} /> : null}
        {tab === 'commissions' ? <CommissionsTab program={p} query={query} /> : null}
        {tab === 'payouts' ? <PayoutsTab program={p} onProgramChange={program.setData} /> : null}
        {tab === 'events' ? <EventsTab program={p} query={query} /> : null}
        {tab === 'readiness' ? <ReadinessTab program={p} /> : null}
      </div>
    </section>
  );
}
