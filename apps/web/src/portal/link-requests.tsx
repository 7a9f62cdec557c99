/** A partner asks for another referral link (where the program allows it) and sees the answers (docs/partners.md). */
import { useState } from 'preact/hooks';
import type { LinkRequestView, PortalOverview } from '@reftrack/contract';
import { useLoad } from '../lib/use-load.js';
import { formatDateTime } from '../lib/format.js';
import { ErrorNotice, Status } from '../components/ui.js';
import { portalApi } from './portal-api.js';
import { DataTable } from '../components/data-table.js';

const STATUS: Record<LinkRequestView['status'], string> = { pending: 'Waiting for the owner', approved: 'Approved', declined: 'Declined' };

export function LinkRequests({ partnerId, d }: { partnerId: number; d: PortalOverview }) {
  const open = d.terms.filter((t) => t.link_requests_open);
  const list = useLoad(() => portalApi.linkRequests(partnerId), [partnerId]);
  const [programId, setProgramId] = useState('');
  const [shortLink, setShortLink] = useState('');
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  if (open.length === 0 && (list.data ?? []).length === 0) return null;
  const chosen = programId || (open[0] ? String(open[0].program_id) : '');
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaid('');
    try {
      const made = await portalApi.askForLink(partnerId, { program_id: Number(chosen), ...(shortLink.trim() ? { short_link: shortLink.trim() } : {}), ...(note.trim() ? { note: note.trim() } : {}) });
      list.setData([made, ...(list.data ?? [])]);
      setShortLink('');
      setNote('');
      setSaid('Link requested. The program owner decides; you get an e-mail when they do.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  const requests = list.data ?? [];
  return (
    <section class="panel" aria-labelledby="link-requests-title">
      <h2 id="link-requests-title">Request another link</h2>
      {open.length > 0 ? (
        <form class="stack" onSubmit={submit} noValidate>
          <div class="grid3">
            <div class="field">
              <label for="request-program">Program</label>
              <select id="request-program" value={chosen} onChange={(e) => setProgramId(e.currentTarget.value)}>
                {open.map((t) => (
                  <option key={t.program_id} value={String(t.program_id)}>
                    {t.program_name}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="request-short-link">Short link you would like (optional)</label>
              <input id="request-short-link" autocomplete="off" maxLength={100} value={shortLink} onInput={(e) => setShortLink(e.currentTarget.value)} aria-describedby="request-short-link-hint" />
              <p class="hint" id="request-short-link-hint">
                Letters, digits, - or _. Empty: the owner picks one.
              </p>
            </div>
            <div class="field">
              <label for="request-note">Where you will use it (optional)</label>
              <input id="request-note" maxLength={500} value={note} onInput={(e) => setNote(e.currentTarget.value)} />
            </div>
          </div>
          <p>
            <button type="submit" disabled={busy}>
              {busy ? 'Sending…' : 'Request the link'}
            </button>
          </p>
          {said ? <Status>{said}</Status> : null}
          <ErrorNotice error={error} />
        </form>
      ) : (
        <p>The programs of this record take no link requests at the moment.</p>
      )}
      {requests.length > 0 ? (
        <DataTable label="Your link requests" columns={['Asked', 'Program', 'Short link', 'Answer']}>
          {requests.map((r) => (
            <tr key={r.id}>
              <th scope="row">{formatDateTime(r.created_at)}</th>
              <td>{r.program_name}</td>
              <td>{r.short_link ? <code>{r.short_link}</code> : '—'}</td>
              <td>
                {STATUS[r.status]}
                {r.decline_reason ? <span class="sub">{r.decline_reason}</span> : null}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : null}
    </section>
  );
}
