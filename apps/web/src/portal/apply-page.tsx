/**
 * The public application page, /apply/<slug> (docs/partners.md, "Applications"): the program's terms
 * and a form — name, e-mail, website, how you will promote. No session; the answer is the same
 * whatever happens to the application, so the page never tells whether an address is a partner.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { APPLICATION_LIMITS, BRAND } from '@reftrack/contract';
import { useLoad } from '../lib/use-load.js';
import { describeCommission } from '../lib/format.js';
import { ErrorNotice, Loading } from '../components/ui.js';
import { portalApi } from './portal-api.js';

export function ApplyApp({ slug }: { slug: string }) {
  const terms = useLoad(() => portalApi.applyTerms(slug), [slug]);
  const [form, setForm] = useState({ name: '', email: '', website: '', promotion: '' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [received, setReceived] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const t = terms.data;
  useEffect(() => {
    document.title = `${t ? `Apply to ${t.program_name}` : 'Apply'} — ${BRAND.name}`;
  }, [t?.program_name]);
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setReceived((await portalApi.apply(slug, form)).message);
      heading.current?.focus();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  let body;
  if (terms.loading && !t) body = <Loading what="the program" />;
  else if (!t)
    body = (
      <>
        <h1 ref={heading} tabIndex={-1}>
          Applications closed
        </h1>
        <ErrorNotice error={terms.error} />
      </>
    );
  else
    body = (
      <>
        <h1 ref={heading} tabIndex={-1}>
          {received ? 'Application received' : `Become a partner of ${t.program_name}`}
        </h1>
        <section class="panel" aria-labelledby="apply-terms-title">
          <h2 id="apply-terms-title">The program's terms</h2>
          <dl class="terms-list">
            <dt>Commission</dt>
            <dd>{describeCommission(t.commission_type, t.commission_rate)}</dd>
            <dt>Cookie window</dt>
            <dd>{t.cookie_window_days} days after a click</dd>
            <dt>Hold period</dt>
            <dd>{t.hold_days} days before a commission can be paid (refunds in that time cancel it)</dd>
            <dt>Payout minimum</dt>
            <dd>{t.payout_minimum > 0 ? `${t.payout_minimum} (major units of each currency)` : 'none'}</dd>
            {t.domain ? (
              <>
                <dt>Site</dt>
                <dd>{t.domain}</dd>
              </>
            ) : null}
          </dl>
        </section>
        <section class="panel" aria-labelledby="apply-form-title">
          <h2 id="apply-form-title">Apply</h2>
          {received ? (
            <p role="status" class="notice success">
              {received}
            </p>
          ) : (
            <form class="stack" onSubmit={submit} noValidate>
              <div class="grid2">
                <div class="field">
                  <label for="apply-name">Your name</label>
                  <input id="apply-name" autocomplete="name" required maxLength={APPLICATION_LIMITS.nameMax} value={form.name} onInput={set('name')} />
                </div>
                <div class="field">
                  <label for="apply-email">E-mail address</label>
                  <input id="apply-email" type="email" autocomplete="email" required value={form.email} onInput={set('email')} aria-describedby="apply-email-hint" />
                  <p class="hint" id="apply-email-hint">
                    The invitation to the partner portal goes here.
                  </p>
                </div>
              </div>
              <div class="field">
                <label for="apply-website">Website (optional)</label>
                <input id="apply-website" type="url" autocomplete="url" placeholder="https://" value={form.website} onInput={set('website')} />
              </div>
              <div class="field">
                <label for="apply-promotion">How will you promote {t.program_name}?</label>
                <textarea id="apply-promotion" required rows={4} maxLength={APPLICATION_LIMITS.promotionMax} value={form.promotion} onInput={set('promotion')} />
              </div>
              <p>
                <button type="submit" disabled={busy}>
                  {busy ? 'Sending…' : 'Send the application'}
                </button>
              </p>
              <ErrorNotice error={error} />
            </form>
          )}
        </section>
      </>
    );
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">
          <span aria-hidden="true" class="logo">
            ◆
          </span>{' '}
          {BRAND.name} · Partner program
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        <div class="narrow-wide">
          {body}
          <p class="muted">
            Already a partner? <a href="/portal/sign-in">Sign in to your partner portal</a>.
          </p>
        </div>
      </main>
    </>
  );
}
