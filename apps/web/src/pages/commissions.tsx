/**
 * Commissions: the program's ledger with filters and pages (newest first), a CSV export of what is
 * shown, and — for owners — approving or declining the selected commissions in one step.
 */
import { useState } from 'preact/hooks';
import { COMMISSION_STATUSES, CURRENCIES, LIMITS, type CommissionReviewResult, type DashboardProgram, type LedgerCommission } from '@reftrack/contract';
import { api, commissionsPath, type LedgerQuery } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { formatDateTime, formatMoney, plural } from '../lib/format.js';
import { AccessMissing, ConfirmDialog, ErrorNotice, isForbidden, Loading, Status } from '../components/ui.js';
import { navigate } from '../lib/router.js';
import { DataTable, numeric } from '../components/data-table.js';

const STATUS_LABELS: Record<string, string> = { pending: 'Pending (on hold)', approved: 'Approved', paid: 'Paid', reversed: 'Reversed (refund)', declined: 'Declined' };

export function CommissionsTab({ program, query }: { program: DashboardProgram; query: URLSearchParams }) {
  const filter: LedgerQuery = {
    status: query.get('status') ?? undefined,
    currency: query.get('currency') ?? undefined,
    partner_id: query.get('partner_id') ?? undefined,
    cursor: query.get('cursor') ?? undefined,
    limit: 50,
  };
  const key = JSON.stringify(filter);
  const ledger = useLoad(() => api.commissions(program.id, filter), [program.id, key]);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [results, setResults] = useState<CommissionReviewResult[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [declining, setDeclining] = useState(false);
  const [reason, setReason] = useState('');
  const mayManage = can(program.role, 'commissions:manage');

  if (isForbidden(ledger.error)) return <AccessMissing error={ledger.error} what="this program's commissions" />;

  const setFilter = (k: keyof LedgerQuery, v: string) => {
    const next = new URLSearchParams(query);
    if (v) next.set(k, v);
    else next.delete(k);
    next.delete('cursor');
    setSelected(new Set());
    navigate(`/programs/${program.id}/commissions${next.toString() ? `?${next}` : ''}`);
  };
  const rows = ledger.data?.data ?? [];
  const toggle = (id: number) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else if (next.size < LIMITS.commissionBulkMax) next.add(id);
    setSelected(next);
  };

  async function review(action: 'approve' | 'decline') {
    setError(null);
    setResults(null);
    try {
      const res = await api.reviewCommissions(program.id, action, [...selected], action === 'decline' ? reason : undefined);
      setResults(res);
      setSelected(new Set());
      setDeclining(false);
      setReason('');
      ledger.reload();
    } catch (err) {
      setDeclining(false);
      setError(err);
    }
  }

  const changed = results?.filter((r) => r.result === 'approved' || r.result === 'declined').length ?? 0;
  const next = ledger.data?.meta.next_cursor;
  const { cursor: _cursor, limit: _limit, ...exportFilter } = filter;
  void _cursor;
  void _limit;

  return (
    <section class="panel" aria-labelledby="commissions-title">
      <h2 id="commissions-title">Commissions</h2>
      <p class="muted">
        A new commission is <strong>pending</strong> for the program's hold ({plural(program.commission_hold_days, 'day')}); it is approved when the hold passes without a refund. Approved commissions are paid
        on the Payouts tab. Amounts are never added across currencies.
      </p>
      <form class="grid3 filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter commissions">
        <label>
          Status
          <select value={filter.status ?? ''} onChange={(e) => setFilter('status', e.currentTarget.value)}>
            <option value="">Any</option>
            {COMMISSION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {STATUS_LABELS[s]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Currency
          <select value={filter.currency ?? ''} onChange={(e) => setFilter('currency', e.currentTarget.value)}>
            <option value="">Any</option>
            {CURRENCIES.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <p>
          <a class="button secondary" href={commissionsPath(program.id, { ...exportFilter, format: 'csv' })} download>
            Export CSV
          </a>
        </p>
      </form>
      {ledger.loading && !ledger.data ? <Loading what="commissions" /> : null}
      <ErrorNotice error={ledger.error} />
      {ledger.data && rows.length === 0 ? <p>No commissions match.</p> : null}
      {rows.length > 0 ? <LedgerTable rows={rows} selectable={mayManage} selected={selected} toggle={toggle} /> : null}
      {mayManage && rows.length > 0 ? (
        <div class="actions">
          <button type="button" disabled={selected.size === 0} onClick={() => review('approve')}>
            Approve selected ({selected.size})
          </button>
          <button type="button" class="danger" disabled={selected.size === 0} onClick={() => setDeclining(true)}>
            Decline selected…
          </button>
        </div>
      ) : null}
      <ConfirmDialog open={declining} title={`Decline ${plural(selected.size, 'commission')}`} confirmLabel="Decline" danger onConfirm={() => review('decline')} onCancel={() => setDeclining(false)}>
        <p>A declined commission is never paid. The partner's ledger shows your reason.</p>
        <label>
          Reason
          <input value={reason} maxLength={500} onInput={(e) => setReason(e.currentTarget.value)} required />
        </label>
      </ConfirmDialog>
      <ErrorNotice error={error} />
      {results ? (
        <Status>
          {plural(changed, 'commission')} changed.
          {results
            .filter((r) => r.result === 'unchanged' || r.result === 'not_found')
            .map((r) => ` #${r.id}: ${'message' in r ? r.message : ''}.`)
            .join('')}
        </Status>
      ) : null}
      <nav class="pager" aria-label="Commission pages">
        {filter.cursor ? (
          <a class="button secondary" href={`/programs/${program.id}/commissions${withoutCursor(query)}`}>
            ← Newest
          </a>
        ) : null}
        {next ? (
          <a class="button secondary" href={`/programs/${program.id}/commissions?${withCursor(query, next)}`} rel="next">
            Older →
          </a>
        ) : null}
      </nav>
    </section>
  );
}

function withoutCursor(query: URLSearchParams): string {
  const q = new URLSearchParams(query);
  q.delete('cursor');
  return q.toString() ? `?${q}` : '';
}

function withCursor(query: URLSearchParams, cursor: string): string {
  const q = new URLSearchParams(query);
  q.set('cursor', cursor);
  return q.toString();
}

function LedgerTable({ rows, selectable, selected, toggle }: { rows: LedgerCommission[]; selectable: boolean; selected: Set<number>; toggle: (id: number) => void }) {
  return (
    <DataTable label="Commissions table" columns={[selectable && 'Select', 'Commission', 'Partner', 'Sale', numeric('Amount'), 'Status', 'Created']}>
      {rows.map((c) => (
        <tr key={c.id}>
          {selectable ? (
            <td>
              <input
                type="checkbox"
                aria-label={`Select commission ${c.id}`}
                checked={selected.has(c.id)}
                disabled={c.status !== 'pending' && c.status !== 'approved'}
                onChange={() => toggle(c.id)}
              />
            </td>
          ) : null}
          <th scope="row">#{c.id}</th>
          <td>
            {c.partner.name} <code>{c.partner.code}</code>
          </td>
          <td>
            <code>{c.transaction_id}</code>
            <span class="sub">
              {formatMoney(c.sale_amount_cents, c.currency)}
              {c.refunded_amount_cents > 0 ? ` · refunded ${formatMoney(c.refunded_amount_cents, c.currency)}` : ''}
            </span>
          </td>
          <td class="num">
            {formatMoney(c.amount_cents, c.currency)}
            {c.adjustments_cents !== 0 ? <span class="sub">clawed back {formatMoney(-c.adjustments_cents, c.currency)}</span> : null}
          </td>
          <td>
            {STATUS_LABELS[c.status]}
            {c.status === 'pending' && c.hold_until ? <span class="sub">until {formatDateTime(c.hold_until)}</span> : null}
            {c.status_reason ? <span class="sub">{c.status_reason}</span> : null}
            {c.payout_id ? <span class="sub">payout #{c.payout_id}</span> : null}
          </td>
          <td>{formatDateTime(c.created_at)}</td>
        </tr>
      ))}
    </DataTable>
  );
}
