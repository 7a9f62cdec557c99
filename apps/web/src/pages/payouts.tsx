/**
 * Payouts: each partner's balance per currency (never added across currencies), paying one
 * balance or every balance above the minimum in a batch, the payouts with their status, and the
 * PayPal and Wise files of a batch. Owners change things; members read.
 */
import { useState } from 'preact/hooks';
import { CURRENCIES, PAYOUT_METHODS, type DashboardProgram, type PartnerBalance, type PayoutObject } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { formatDateTime, formatMoney, plural } from '../lib/format.js';
import { AccessMissing, ErrorNotice, isForbidden, Loading, Status } from '../components/ui.js';
import { DataTable, numeric } from '../components/data-table.js';

const METHOD_LABELS: Record<string, string> = { paypal: 'PayPal', wise: 'Wise', manual: 'Other (manual)' };

export function PayoutsTab({ program, onProgramChange }: { program: DashboardProgram; onProgramChange: (p: DashboardProgram) => void }) {
  const balances = useLoad(() => api.balances(program.id), [program.id]);
  const payouts = useLoad(() => api.payouts(program.id), [program.id]);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  const [method, setMethod] = useState('paypal');
  const [currency, setCurrency] = useState('');
  const mayManage = can(program.role, 'commissions:manage');
  if (isForbidden(balances.error)) return <AccessMissing error={balances.error} what="this program's payouts" />;

  const reload = () => (balances.reload(), payouts.reload());
  async function act(work: () => Promise<string>) {
    setError(null);
    setSaid('');
    try {
      setSaid(await work());
      reload();
    } catch (err) {
      setError(err);
    }
  }
  const pay = (b: PartnerBalance) =>
    act(async () => {
      const p = await api.createPayout(program.id, { partner_id: b.partner.id, currency: b.currency, method });
      return `Payout ${p.reference} of ${formatMoney(p.amount_cents, p.currency)} to ${b.partner.name} created.`;
    });
  const batch = () =>
    act(async () => {
      const r = await api.createPayoutBatch(program.id, { method, ...(currency ? { currency } : {}) });
      return `Batch ${r.batch_id}: ${plural(r.payouts.length, 'payout')} created${r.skipped.length ? `, ${r.skipped.length} below the minimum or with nothing to pay` : ''}.`;
    });
  const mark = (p: PayoutObject, status: 'sent' | 'failed') =>
    act(async () => {
      const u = await api.updatePayout(p.id, status);
      return `Payout ${u.reference} is now ${u.status}.${status === 'failed' ? ' Its commissions are approved again.' : ''}`;
    });

  return (
    <>
      <section class="panel" aria-labelledby="balances-title">
        <h2 id="balances-title">Balances</h2>
        <p class="muted">
          Payable is what a payout pays now: approved commissions minus claw-backs of refunds after an earlier payout. A negative payable means the partner owes it; the next payout deducts it.
        </p>
        {balances.loading && !balances.data ? <Loading what="balances" /> : null}
        <ErrorNotice error={balances.error} />
        {balances.data && balances.data.length === 0 ? <p>No commissions yet.</p> : null}
        {balances.data && balances.data.length > 0 ? (
          <DataTable
            label="Balances table"
            columns={['Partner', 'Currency', numeric('Pending'), numeric('Approved'), numeric('Paid'), numeric('Clawed back'), numeric('Payable'), mayManage && 'Pay']}
          >
            {balances.data.map((b) => (
              <tr key={`${b.partner.id}-${b.currency}`}>
                <th scope="row">
                  {b.partner.name} <code>{b.partner.code}</code>
                </th>
                <td>{b.currency}</td>
                <td class="num">{formatMoney(b.pending_cents, b.currency)}</td>
                <td class="num">{formatMoney(b.approved_cents, b.currency)}</td>
                <td class="num">{formatMoney(b.paid_cents, b.currency)}</td>
                <td class="num">{formatMoney(b.clawed_back_cents, b.currency)}</td>
                <td class={`num${b.payable_cents < 0 ? ' negative' : ''}`}>{formatMoney(b.payable_cents, b.currency)}</td>
                {mayManage ? (
                  <td>
                    <button type="button" class="secondary small" disabled={b.payable_cents <= 0 || b.approved_cents <= 0} onClick={() => pay(b)} aria-label={`Pay ${b.partner.name} ${b.currency}`}>
                      Pay
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </DataTable>
        ) : null}
        {mayManage ? (
          <form class="grid3 inline-form" onSubmit={(e) => (e.preventDefault(), batch())} aria-labelledby="batch-title">
            <h3 id="batch-title">Pay everyone</h3>
            <label>
              Method
              <select value={method} onChange={(e) => setMethod(e.currentTarget.value)}>
                {PAYOUT_METHODS.map((m) => (
                  <option key={m} value={m}>
                    {METHOD_LABELS[m]}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Currency
              <select value={currency} onChange={(e) => setCurrency(e.currentTarget.value)}>
                <option value="">Every currency</option>
                {CURRENCIES.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </label>
            <p class="muted">
              Pays every partner whose payable balance reaches the minimum ({program.payout_minimum} in each currency). <button type="submit">Create batch</button>
            </p>
          </form>
        ) : null}
        <ErrorNotice error={error} />
        {said ? <Status>{said}</Status> : null}
      </section>
      <section class="panel" aria-labelledby="payouts-title">
        <h2 id="payouts-title">Payouts</h2>
        {payouts.loading && !payouts.data ? <Loading what="payouts" /> : null}
        <ErrorNotice error={payouts.error} />
        {payouts.data && payouts.data.length === 0 ? <p>No payouts yet.</p> : null}
        {payouts.data && payouts.data.length > 0 ? <PayoutTable payouts={payouts.data} mayManage={mayManage} mark={mark} /> : null}
      </section>
      {mayManage ? <PayoutSettings program={program} onChange={onProgramChange} /> : null}
    </>
  );
}

function PayoutTable({ payouts, mayManage, mark }: { payouts: PayoutObject[]; mayManage: boolean; mark: (p: PayoutObject, s: 'sent' | 'failed') => void }) {
  return (
    <DataTable label="Payouts table" columns={['Reference', 'Partner', numeric('Amount'), 'Method', 'Status', 'Created', 'Files and actions']}>
      {payouts.map((p) => (
        <tr key={p.id}>
          <th scope="row">
            <code>{p.reference}</code>
          </th>
          <td>
            {p.partner.name} <code>{p.partner.code}</code>
          </td>
          <td class="num">
            {formatMoney(p.amount_cents, p.currency)}
            <span class="sub">
              {plural(p.commission_count, 'commission')}
              {p.adjustments_cents !== 0 ? `, claw-backs ${formatMoney(p.adjustments_cents, p.currency)}` : ''}
            </span>
          </td>
          <td>{METHOD_LABELS[p.method]}</td>
          <td>{p.status}</td>
          <td>{formatDateTime(p.created_at)}</td>
          <td>
            {p.batch_id !== null && mayManage ? (
              <span class="sub">
                Batch {p.batch_id}:{' '}
                <a href={`/api/dashboard/payout-batches/${p.batch_id}/export?format=paypal&currency=${p.currency}`} download>
                  PayPal file
                </a>{' '}
                ·{' '}
                <a href={`/api/dashboard/payout-batches/${p.batch_id}/export?format=wise&currency=${p.currency}`} download>
                  Wise file
                </a>
              </span>
            ) : null}
            {mayManage && p.status === 'created' ? (
              <button type="button" class="secondary small" onClick={() => mark(p, 'sent')} aria-label={`Mark sent: payout ${p.reference}`}>
                Mark sent
              </button>
            ) : null}
            {mayManage && p.status !== 'failed' ? (
              <button type="button" class="secondary small" onClick={() => mark(p, 'failed')} aria-label={`Mark failed: payout ${p.reference}`}>
                Mark failed
              </button>
            ) : null}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function PayoutSettings({ program, onChange }: { program: DashboardProgram; onChange: (p: DashboardProgram) => void }) {
  const [hold, setHold] = useState(String(program.commission_hold_days));
  const [minimum, setMinimum] = useState(String(program.payout_minimum));
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    setSaid('');
    try {
      const updated = await api.updateProgram(program.id, { commission_hold_days: Number(hold), payout_minimum: Number(minimum) });
      onChange({ ...updated, role: program.role });
      setSaid('Saved. The hold applies to commissions created from now on.');
    } catch (err) {
      setError(err);
    }
  }
  return (
    <section class="panel" aria-labelledby="payout-settings-title">
      <h2 id="payout-settings-title">Hold and minimum</h2>
      <form class="grid3" onSubmit={submit}>
        <label>
          Hold (days)
          <input type="number" min={0} max={365} value={hold} onInput={(e) => setHold(e.currentTarget.value)} />
        </label>
        <label>
          Payout minimum (in each currency)
          <input type="number" min={0} value={minimum} onInput={(e) => setMinimum(e.currentTarget.value)} />
        </label>
        <p>
          <button type="submit">Save</button>
        </p>
      </form>
      <ErrorNotice error={error} />
      {said ? <Status>{said}</Status> : null}
    </section>
  );
}
