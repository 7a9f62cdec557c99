/**
 * Where the partner is paid: PayPal, or a bank account paid through Wise (IBAN and BIC; a UK account
 * with sort code; a US account with ACH routing number and type). Stored encrypted; only a summary
 * comes back (docs/commissions.md, "Payout details").
 */
import { useState } from 'preact/hooks';
import { useLoad } from '../lib/use-load.js';
import { ErrorNotice } from '../components/ui.js';
import { portalApi } from './portal-api.js';

type Method = 'paypal' | 'wise';
const EMPTY = { paypal_email: '', account_holder: '', email: '', iban: '', bic: '', account_number: '', sort_code: '', abartn: '', account_type: '', receiver_type: 'PRIVATE' };

function Input({ id, label, value, onInput, type = 'text', hint, autocomplete }: { id: string; label: string; value: string; onInput: (v: string) => void; type?: 'text' | 'email'; hint?: string; autocomplete?: string }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} type={type as 'text'} autocomplete={autocomplete ?? 'off'} value={value} onInput={(e) => onInput(e.currentTarget.value)} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

export function PayoutDetails({ partnerId }: { partnerId: number }) {
  const current = useLoad(() => portalApi.payoutDetails(partnerId), [partnerId]);
  const [method, setMethod] = useState<Method>('paypal');
  const [form, setForm] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [said, setSaid] = useState('');
  const set = (k: keyof typeof EMPTY) => (v: string) => setForm({ ...form, [k]: v });
  async function save(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaid('');
    // Only the filled-in fields of the chosen method are sent; the server checks them.
    const fields = method === 'paypal' ? { paypal_email: form.paypal_email } : Object.fromEntries(Object.entries(form).filter(([k, v]) => k !== 'paypal_email' && v.trim() !== ''));
    try {
      current.setData(await portalApi.savePayoutDetails(partnerId, { method, ...fields }));
      setSaid('Payout details saved.');
      setForm(EMPTY);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section class="panel" aria-labelledby="payout-details-title">
      <h2 id="payout-details-title">Payout details</h2>
      <p>{current.data ? `Paid by ${current.data.method === 'paypal' ? 'PayPal' : 'bank transfer (Wise)'}: ${current.data.summary}` : 'No payout details yet: add them so the program can pay you.'}</p>
      <form class="stack" onSubmit={save} noValidate>
        <fieldset class="radios">
          <legend>How you are paid</legend>
          <label class="radio">
            <input type="radio" name="payout-method" value="paypal" checked={method === 'paypal'} onChange={() => setMethod('paypal')} /> PayPal
          </label>
          <label class="radio">
            <input type="radio" name="payout-method" value="wise" checked={method === 'wise'} onChange={() => setMethod('wise')} /> Bank transfer (paid through Wise)
          </label>
        </fieldset>
        {method === 'paypal' ? (
          <Input id="paypal-email" label="PayPal e-mail address" type="email" autocomplete="email" value={form.paypal_email} onInput={set('paypal_email')} />
        ) : (
          <div class="grid2">
            <Input id="wise-holder" label="Account holder" autocomplete="name" value={form.account_holder} onInput={set('account_holder')} />
            <Input id="wise-email" label="E-mail address for payment notices" type="email" autocomplete="email" value={form.email} onInput={set('email')} />
            <Input id="wise-iban" label="IBAN" hint="Europe and most countries. Or give an account number below." value={form.iban} onInput={set('iban')} />
            <Input id="wise-bic" label="BIC (optional)" value={form.bic} onInput={set('bic')} />
            <Input id="wise-account-number" label="Account number (without IBAN)" value={form.account_number} onInput={set('account_number')} />
            <Input id="wise-sort-code" label="Sort code (UK accounts)" value={form.sort_code} onInput={set('sort_code')} />
            <Input id="wise-abartn" label="ACH routing number (US accounts)" value={form.abartn} onInput={set('abartn')} />
            <div class="field">
              <label for="wise-account-type">Account type (US accounts)</label>
              <select id="wise-account-type" value={form.account_type} onChange={(e) => set('account_type')(e.currentTarget.value)}>
                <option value="">—</option>
                <option value="CHECKING">Checking</option>
                <option value="SAVINGS">Savings</option>
              </select>
            </div>
            <div class="field">
              <label for="wise-receiver-type">The account belongs to</label>
              <select id="wise-receiver-type" value={form.receiver_type} onChange={(e) => set('receiver_type')(e.currentTarget.value)}>
                <option value="PRIVATE">A person</option>
                <option value="BUSINESS">A business</option>
              </select>
            </div>
          </div>
        )}
        <p>
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Save payout details'}
          </button>
        </p>
        <p role="status">{said}</p>
        <ErrorNotice error={error} />
      </form>
      <p class="muted">Stored encrypted; only a summary is ever shown.</p>
    </section>
  );
}
