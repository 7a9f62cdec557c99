/**
 * Payments: connect the payment processor (account id and webhook signing secret) and show the
 * connection's own webhook address, the one to give Stripe (docs/stripe.md).
 */
import { useRef, useState } from 'preact/hooks';
import { BRAND, ERRORS, formatMessage, STRIPE_INTAKE_EVENTS } from '@reftrack/contract';
import type { DashboardProgram } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { useLoad } from '../lib/use-load.js';
import { can } from '../lib/roles.js';
import { checkPayments } from '../lib/validate.js';
import { AccessMissing, CodeBlock, ErrorNotice, Field, isForbidden, Loading, Status, useFocusOnError } from '../components/ui.js';

export function PaymentsTab({ program }: { program: DashboardProgram }) {
  const payments = useLoad(() => api.payments(program.id), [program.id]);
  const mayWrite = can(program.role, 'payments:write');
  const [form, setForm] = useState({ stripe_account_id: '', webhook_secret: '' });
  const [invalid, setInvalid] = useState<{ field: string; message: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLFormElement>(null);
  useFocusOnError(invalid?.field ?? null, ref);
  const err = (k: string) => (invalid?.field === k ? invalid.message : null);

  if (isForbidden(payments.error)) return <AccessMissing error={payments.error} what="this program's payment settings" />;
  const p = payments.data;

  async function connect(e: Event) {
    e.preventDefault();
    setError(null);
    setDone('');
    const checked = checkPayments(form);
    if (!checked.ok) return setInvalid({ field: checked.field, message: checked.message });
    setInvalid(null);
    setBusy(true);
    try {
      payments.setData(await api.connectPayments(program.id, checked.value));
      setForm({ stripe_account_id: '', webhook_secret: '' });
      setDone('Stripe connected.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  async function disconnect() {
    setError(null);
    setBusy(true);
    try {
      payments.setData(await api.disconnectPayments(program.id));
      setDone('Stripe disconnected.');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <section class="panel" aria-labelledby="payments-title">
        <h2 id="payments-title">Payment processor (Stripe)</h2>
        {payments.loading && !p ? <Loading what="the processor connection" /> : null}
        <ErrorNotice error={payments.error} />
        {p ? (
          <>
            <dl class="facts">
              <div>
                <dt>Status</dt>
                <dd>
                  <span class={`badge ${p.connected ? 'ok' : 'warn'}`}>{p.connected ? 'Connected' : 'Not connected'}</span>
                </dd>
              </div>
              <div>
                <dt>Account</dt>
                <dd>{p.stripe_account_id ? <code>{p.stripe_account_id}</code> : '—'}</dd>
              </div>
              <div>
                <dt>Signing secret</dt>
                <dd>{p.webhook_secret_set ? 'Stored (never shown again)' : 'Not set'}</dd>
              </div>
            </dl>
            <h3>Webhook URL</h3>
            <p class="muted">
              In Stripe's dashboard, add a webhook endpoint subscribed to these {STRIPE_INTAKE_EVENTS.length} events, then paste its signing secret below. Put{' '}
              <code>{BRAND.metadataClickId}</code>, <code>{BRAND.metadataCustomerKey}</code> and <code>{BRAND.metadataProgramId}</code> in your checkout session's metadata.
            </p>
            <ul class="stripe-events" aria-label="Stripe events to subscribe to">
              {STRIPE_INTAKE_EVENTS.map((e) => (
                <li key={e.type}>
                  <code>{e.type}</code> — {e.why}
                </li>
              ))}
            </ul>
            <p class="muted">
              <code>invoice.paid</code> is accepted too, in place of or beside <code>invoice.payment_succeeded</code>: both record the invoice under its invoice id, so each invoice is counted once
              (the second answers <code>already_recorded</code>).
            </p>
            {p.intake_url ? (
              <>
                <p class="muted">
                  This connection's own address: set it as the URL of the webhook endpoint in Stripe. It stays the same when you replace the secret or account; disconnecting and connecting
                  again gives a new one.
                </p>
                <CodeBlock code={p.intake_url} what="webhook URL" />
                <p class="muted">
                  The shared address <code>{p.webhook_url}</code> still works for events that name this program's account or its <code>{BRAND.metadataProgramId}</code>, but refunds
                  and disputes without them are refused there: use the address above.
                </p>
              </>
            ) : (
              <>
                <p class="muted">
                  Connecting gives this program its own webhook address. In Stripe, add a webhook endpoint (you can enter the address below for now), copy its signing secret and
                  connect below; then change the endpoint's URL in Stripe to the address shown here.
                </p>
                <CodeBlock code={p.webhook_url} what="shared webhook URL" />
              </>
            )}
          </>
        ) : null}
      </section>
      {p ? (
        <section class="panel" aria-labelledby="connect-title">
          <h2 id="connect-title">{p.connected ? 'Replace the connection' : 'Connect Stripe'}</h2>
          {!mayWrite ? <p class="notice info">{formatMessage(ERRORS.permissionDenied.message, { permission: 'payments:write' })}.</p> : null}
          <form ref={ref} class="stack" onSubmit={connect} noValidate>
            <fieldset disabled={!mayWrite || busy}>
              <legend class="visually-hidden">Stripe connection</legend>
              <div class="grid2">
                <Field id="stripe-account" label="Stripe account id" hint="Starts with acct_" error={err('stripe_account_id')}>
                  {(d, bad) => (
                    <input
                      id="stripe-account"
                      name="stripe_account_id"
                      placeholder="acct_…"
                      autocomplete="off"
                      value={form.stripe_account_id}
                      onInput={(e) => setForm({ ...form, stripe_account_id: e.currentTarget.value })}
                      aria-describedby={d}
                      aria-invalid={bad}
                    />
                  )}
                </Field>
                <Field id="stripe-secret" label="Webhook signing secret" hint="Starts with whsec_; stored, never shown again" error={err('webhook_secret')}>
                  {(d, bad) => (
                    <input
                      id="stripe-secret"
                      name="webhook_secret"
                      type="password"
                      placeholder="whsec_…"
                      autocomplete="off"
                      value={form.webhook_secret}
                      onInput={(e) => setForm({ ...form, webhook_secret: e.currentTarget.value })}
                      aria-describedby={d}
                      aria-invalid={bad}
                    />
                  )}
                </Field>
              </div>
              <div class="actions">
                <button type="submit">{p.connected ? 'Save connection' : 'Connect'}</button>
                {p.connected ? (
                  <button type="button" class="secondary" onClick={disconnect}>
                    Disconnect
                  </button>
                ) : null}
              </div>
            </fieldset>
            <ErrorNotice error={error} />
            {done ? <Status>{done}</Status> : null}
          </form>
        </section>
      ) : null}
    </>
  );
}
