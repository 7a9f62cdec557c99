/** The program fields form, used to create a program and to edit its settings. */
import { useRef, useState } from 'preact/hooks';
import { COMMISSION_TYPES, LEAD_AUTH_MODES, LIMITS } from '@reftrack/contract';
import { checkProgram, type ProgramFields, type ProgramForm } from '../lib/validate.js';
import { COMMISSION_LABELS } from '../lib/format.js';
import { ErrorNotice, Field, Status, useFocusOnError } from './ui.js';

export const LEAD_AUTH_LABELS: Record<string, { title: string; hint: string }> = {
  server_required: {
    title: 'Server-verified leads only (recommended)',
    hint: 'Leads count only when your server reports them with the program key. Browser leads stay provisional.',
  },
  browser_allowed: {
    title: 'Allow browser leads',
    hint: 'The tracker may record leads from the browser without the key. Easier, but anyone can forge them.',
  },
};

export function emptyProgramForm(): ProgramForm {
  return { name: '', domain: '', commission_type: 'percent', commission_rate: '', attribution_window_days: String(LIMITS.attributionWindowDaysDefault), lead_auth: 'server_required' };
}

export function ProgramFormView(props: {
  idPrefix: string;
  initial: ProgramForm;
  submitLabel: string;
  disabled?: boolean;
  onSubmit: (fields: ProgramFields) => Promise<string | void>;
  extra?: preact.ComponentChildren;
}) {
  const [form, setForm] = useState<ProgramForm>(props.initial);
  const [invalid, setInvalid] = useState<{ field: string; message: string } | null>(null);
  const [serverError, setServerError] = useState<unknown>(null);
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusOnError(invalid?.field ?? null, formRef);

  const set = (k: keyof ProgramForm) => (e: Event) => {
    setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value });
    setDone('');
  };
  const err = (k: string) => (invalid?.field === k ? invalid.message : null);
  const id = (k: string) => `${props.idPrefix}-${k}`;
  const percent = form.commission_type.endsWith('percent');

  async function submit(e: Event) {
    e.preventDefault();
    setServerError(null);
    setDone('');
    const checked = checkProgram(form);
    if (!checked.ok) {
      setInvalid({ field: checked.field, message: checked.message });
      return;
    }
    setInvalid(null);
    setBusy(true);
    try {
      setDone((await props.onSubmit(checked.value)) ?? '');
    } catch (error) {
      setServerError(error);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form ref={formRef} onSubmit={submit} noValidate class="stack program-form">
      {props.extra}
      <fieldset disabled={props.disabled || busy}>
        <legend class="visually-hidden">Program settings</legend>
        <div class="grid2">
          <Field id={id('name')} label="Name" error={err('name')}>
            {(d, bad) => <input id={id('name')} name="name" value={form.name} onInput={set('name')} aria-describedby={d} aria-invalid={bad} maxLength={200} required />}
          </Field>
          <Field id={id('domain')} label="Domain" hint="Your site's host name, e.g. shop.example.com" error={err('domain')}>
            {(d, bad) => <input id={id('domain')} name="domain" value={form.domain} onInput={set('domain')} aria-describedby={d} aria-invalid={bad} inputMode="url" autocomplete="off" required />}
          </Field>
          <Field id={id('commission_type')} label="Commission type" error={err('commission_type')}>
            {(d, bad) => (
              <select id={id('commission_type')} name="commission_type" value={form.commission_type} onChange={set('commission_type')} aria-describedby={d} aria-invalid={bad}>
                {COMMISSION_TYPES.map((t) => (
                  <option value={t} key={t}>
                    {COMMISSION_LABELS[t]}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field
            id={id('commission_rate')}
            label={percent ? 'Commission rate (%)' : 'Commission amount'}
            hint={percent ? 'Percent of the sale amount, e.g. 20' : "In major units of the sale's currency, e.g. 10 for $10.00"}
            error={err('commission_rate')}
          >
            {(d, bad) => (
              <input id={id('commission_rate')} name="commission_rate" type="number" min="0" step="any" inputMode="decimal" value={form.commission_rate} onInput={set('commission_rate')} aria-describedby={d} aria-invalid={bad} required />
            )}
          </Field>
          <Field id={id('attribution_window_days')} label="Attribution window (days)" hint="How long after a click a signup still counts: 1 to 365 days" error={err('attribution_window_days')}>
            {(d, bad) => (
              <input
                id={id('attribution_window_days')}
                name="attribution_window_days"
                type="number"
                min="1"
                max="365"
                step="1"
                inputMode="numeric"
                value={form.attribution_window_days}
                onInput={set('attribution_window_days')}
                aria-describedby={d}
                aria-invalid={bad}
              />
            )}
          </Field>
        </div>
        <fieldset class="radios" aria-describedby={err('lead_auth') ? id('lead_auth-error') : undefined}>
          <legend>Leads (lead_auth)</legend>
          {LEAD_AUTH_MODES.map((mode) => (
            <label class="radio" key={mode}>
              <input type="radio" name="lead_auth" value={mode} checked={form.lead_auth === mode} onChange={set('lead_auth')} aria-describedby={id(`${mode}-hint`)} />
              <span>
                <strong>{LEAD_AUTH_LABELS[mode].title}</strong> <code>{mode}</code>
                <span class="hint" id={id(`${mode}-hint`)}>
                  {LEAD_AUTH_LABELS[mode].hint}
                </span>
              </span>
            </label>
          ))}
          {err('lead_auth') ? (
            <p class="field-error" id={id('lead_auth-error')}>
              {err('lead_auth')}
            </p>
          ) : null}
        </fieldset>
        <div class="actions">
          <button type="submit">{busy ? 'Saving…' : props.submitLabel}</button>
        </div>
      </fieldset>
      {invalid ? (
        <p class="visually-hidden" role="alert">
          {invalid.message}
        </p>
      ) : null}
      <ErrorNotice error={serverError} />
      {done ? <Status>{done}</Status> : null}
    </form>
  );
}

export function formFromProgram(p: { name: string; domain: string; commission_type: string; commission_rate: number; attribution_window_days: number; lead_auth: string }): ProgramForm {
  return {
    name: p.name,
    domain: p.domain,
    commission_type: p.commission_type,
    commission_rate: String(p.commission_rate),
    attribution_window_days: String(p.attribution_window_days),
    lead_auth: p.lead_auth,
  };
}
