/** Partners & links: enrolled partners with their numbers; referral links with clicks, last click and the on/off switch. */
import { useRef, useState } from 'preact/hooks';
import type { DashboardLink, DashboardPartner, DashboardProgram } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { checkLink, checkPartner } from '../lib/validate.js';
import { formatDateTime, formatMoney } from '../lib/format.js';
import { AccessMissing, CopyButton, ErrorNotice, Field, isForbidden, Loading, Status, useFocusOnError } from '../components/ui.js';
import { ApplicationsPanel, LinkRequestsPanel, PortalSettingsPanel } from './partner-requests.js';
import { DataTable, numeric } from '../components/data-table.js';

export function PartnersTab({ program }: { program: DashboardProgram }) {
  const partners = useLoad(() => api.partners(program.id), [program.id]);
  const links = useLoad(() => api.links(program.id), [program.id]);
  const mayWrite = can(program.role, 'partners:write');

  if (isForbidden(partners.error)) return <AccessMissing error={partners.error} what="this program's partners and referral links" />;

  return (
    <>
      <section class="panel" aria-labelledby="partners-title">
        <h2 id="partners-title">Partners</h2>
        {partners.loading && !partners.data ? <Loading what="partners" /> : null}
        <ErrorNotice error={partners.error} />
        {partners.data ? <PartnerTable partners={partners.data} mayInvite={mayWrite} /> : null}
        {mayWrite ? <PartnerForm programId={program.id} onAdded={() => (partners.reload(), links.reload())} /> : null}
      </section>
      <section class="panel" aria-labelledby="links-title">
        <h2 id="links-title">Referral links</h2>
        <p class="muted">
          A visit to your site with <code>?aff=</code> and the short link counts as a click for the link's partner. A link that is switched off answers clicks with 410 <code>link_disabled</code> and records
          nothing.
        </p>
        {links.loading && !links.data ? <Loading what="links" /> : null}
        <ErrorNotice error={links.error} />
        {links.data ? <LinkTable links={links.data} mayWrite={mayWrite} onChanged={(l) => links.setData(links.data!.map((x) => (x.id === l.id ? l : x)))} /> : null}
        {mayWrite && partners.data ? <LinkForm programId={program.id} partners={partners.data} onAdded={() => (links.reload(), partners.reload())} /> : null}
      </section>
      <ApplicationsPanel program={program} mayWrite={mayWrite} onApproved={() => (partners.reload(), links.reload())} />
      <LinkRequestsPanel program={program} mayWrite={mayWrite} onApproved={() => links.reload()} />
      <PortalSettingsPanel program={program} mayWrite={mayWrite} />
    </>
  );
}

function PartnerTable({ partners, mayInvite }: { partners: DashboardPartner[]; mayInvite: boolean }) {
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<number | null>(null);
  if (partners.length === 0) return <p>No partners in this program yet.</p>;
  async function invite(p: DashboardPartner) {
    if (busy !== null) return;
    setBusy(p.id);
    setError(null);
    try {
      const sent = await api.invitePartner(p.id);
      setSaid(`Invitation to the partner portal sent to ${sent.email}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  }
  return (
    <>
    <DataTable
      label="Partners table"
      columns={['Partner', 'Code', numeric('Clicks'), numeric('Leads'), numeric('Sales'), numeric(<>Revenue <span class="sub">net of refunds</span></>), numeric('Commissions'), 'Last click', mayInvite && 'Partner portal']}
    >
      {partners.map((p) => (
        <tr key={p.id}>
          <th scope="row">
            {p.name}
            {p.email ? <span class="sub">{p.email}</span> : null}
          </th>
          <td>
            <code>{p.code}</code>
          </td>
          <td class="num">{p.clicks}</td>
          <td class="num">{p.leads}</td>
          <td class="num">{p.sales}</td>
          <td class="num">{perCurrency(p, 'revenue_cents')}</td>
          <td class="num">{perCurrency(p, 'commissions_cents')}</td>
          <td>{formatDateTime(p.last_clicked)}</td>
          {mayInvite ? (
            <td>
              {p.email ? (
                <button type="button" class="secondary small" aria-label={`Invite ${p.name} to the partner portal`} onClick={() => invite(p)} disabled={busy === p.id}>
                  Invite
                </button>
              ) : (
                <span class="sub">add an e-mail address to invite</span>
              )}
            </td>
          ) : null}
        </tr>
      ))}
    </DataTable>
    <p role="status">{said}</p>
    <ErrorNotice error={error} />
    </>
  );
}

/** One line per currency: amounts of different currencies are never added together. */
function perCurrency(p: DashboardPartner, field: 'revenue_cents' | 'commissions_cents') {
  if (p.earnings.length === 0) return '—';
  return p.earnings.map((e) => (
    <span key={e.currency} class="money-line">
      {formatMoney(e[field], e.currency)}
    </span>
  ));
}

function LinkTable({ links, mayWrite, onChanged }: { links: DashboardLink[]; mayWrite: boolean; onChanged: (l: DashboardLink) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<number | null>(null);
  const [said, setSaid] = useState('');
  if (links.length === 0) return <p>No referral links yet.</p>;
  async function flip(link: DashboardLink) {
    // The switch stays enabled (and focused) while the change is sent; repeated presses wait.
    if (busy !== null) return;
    setBusy(link.id);
    setError(null);
    try {
      const updated = await api.switchLink(link.id, !link.active);
      onChanged(updated);
      setSaid(`Link ${updated.short_link} is now ${updated.active ? 'on' : 'off'}.`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  }
  return (
    <>
      <DataTable label="Referral links table" columns={['Short link', 'Partner', 'Link to share', numeric('Clicks'), 'Last click', 'Active']}>
        {links.map((l) => (
          <tr key={l.id} class={l.active ? '' : 'inactive'}>
            <th scope="row">
              <code>{l.short_link}</code>
            </th>
            <td>{l.partner_code ? <code>{l.partner_code}</code> : '—'}</td>
            <td class="url-cell">
              {l.url ? (
                <>
                  <span class="url">{l.url}</span> <CopyButton text={l.url} what={`link ${l.short_link}`} />
                </>
              ) : (
                '—'
              )}
            </td>
            <td class="num">{l.clicks}</td>
            <td>{formatDateTime(l.last_clicked)}</td>
            <td>
              <button
                type="button"
                role="switch"
                class="switch"
                aria-checked={l.active}
                aria-label={`Link ${l.short_link} active`}
                disabled={!mayWrite}
                aria-busy={busy === l.id}
                onClick={() => flip(l)}
              >
                <span class="track" aria-hidden="true">
                  <span class="thumb" />
                </span>
                <span class="switch-text">{l.active ? 'On' : 'Off'}</span>
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {said ? <Status>{said}</Status> : null}
      <ErrorNotice error={error} />
    </>
  );
}

function PartnerForm({ programId, onAdded }: { programId: number; onAdded: () => void }) {
  const [form, setForm] = useState({ name: '', code: '', email: '' });
  const [invalid, setInvalid] = useState<{ field: string; message: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const ref = useRef<HTMLFormElement>(null);
  useFocusOnError(invalid?.field ?? null, ref);
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  const err = (k: string) => (invalid?.field === k ? invalid.message : null);
  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setDone('');
    const checked = checkPartner(form);
    if (!checked.ok) return setInvalid({ field: checked.field, message: checked.message });
    setInvalid(null);
    try {
      const p = await api.addPartner(programId, checked.value);
      setForm({ name: '', code: '', email: '' });
      setDone(`Partner ${p.name} added.`);
      onAdded();
    } catch (err) {
      setError(err);
    }
  }
  return (
    <form ref={ref} class="stack inline-form" onSubmit={submit} noValidate aria-labelledby="add-partner">
      <h3 id="add-partner">Add a partner</h3>
      <div class="grid3">
        <Field id="partner-name" label="Name" error={err('name')}>
          {(d, bad) => <input id="partner-name" name="name" value={form.name} onInput={set('name')} aria-describedby={d} aria-invalid={bad} required />}
        </Field>
        <Field id="partner-code" label="Code" hint="Letters, digits, - or _; unique" error={err('code')}>
          {(d, bad) => <input id="partner-code" name="code" value={form.code} onInput={set('code')} aria-describedby={d} aria-invalid={bad} autocomplete="off" required />}
        </Field>
        <Field id="partner-email" label="E-mail (optional)" error={err('email')}>
          {(d, bad) => <input id="partner-email" name="email" type="email" value={form.email} onInput={set('email')} aria-describedby={d} aria-invalid={bad} />}
        </Field>
      </div>
      <div class="actions">
        <button type="submit">Add partner</button>
      </div>
      <ErrorNotice error={error} />
      {done ? <Status>{done}</Status> : null}
    </form>
  );
}

function LinkForm({ programId, partners, onAdded }: { programId: number; partners: DashboardPartner[]; onAdded: () => void }) {
  const [form, setForm] = useState({ short_link: '', partner_id: '' });
  const [invalid, setInvalid] = useState<{ field: string; message: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const ref = useRef<HTMLFormElement>(null);
  useFocusOnError(invalid?.field ?? null, ref);
  const partnerId = form.partner_id || (partners[0] ? String(partners[0].id) : '');
  const err = (k: string) => (invalid?.field === k ? invalid.message : null);
  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setDone('');
    const checked = checkLink({ short_link: form.short_link, partner_id: partnerId });
    if (!checked.ok) return setInvalid({ field: checked.field, message: checked.message });
    setInvalid(null);
    try {
      const l = await api.createLink(programId, checked.value);
      setForm({ short_link: '', partner_id: form.partner_id });
      setDone(`Link ${l.short_link} created.`);
      onAdded();
    } catch (err) {
      setError(err);
    }
  }
  if (partners.length === 0) return <p class="muted">Add a partner first: every link belongs to a partner.</p>;
  return (
    <form ref={ref} class="stack inline-form" onSubmit={submit} noValidate aria-labelledby="add-link">
      <h3 id="add-link">Create a link</h3>
      <div class="grid3">
        <Field id="link-short" label="Short link (the aff value)" hint="Letters, digits, - or _; unique" error={err('short_link')}>
          {(d, bad) => (
            <input id="link-short" name="short_link" value={form.short_link} onInput={(e) => setForm({ ...form, short_link: e.currentTarget.value })} aria-describedby={d} aria-invalid={bad} autocomplete="off" required />
          )}
        </Field>
        <Field id="link-partner" label="Partner" error={err('partner_id')}>
          {(d, bad) => (
            <select id="link-partner" name="partner_id" value={partnerId} onChange={(e) => setForm({ ...form, partner_id: e.currentTarget.value })} aria-describedby={d} aria-invalid={bad}>
              {partners.map((p) => (
                <option key={p.id} value={String(p.id)}>
                  {p.name} ({p.code})
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <div class="actions">
        <button type="submit">Create link</button>
      </div>
      <ErrorNotice error={error} />
      {done ? <Status>{done}</Status> : null}
    </form>
  );
}
