/** Small shared pieces: copy button, notices, form fields, loading state, page heading. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../lib/api.js';

async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Clipboard API refused (permissions, insecure origin): fall back to a selected textarea.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

export function CopyButton({ text, label = 'Copy', what }: { text: string; label?: string; what: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const t = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(t);
  }, [state]);
  return (
    <span class="copy">
      <button type="button" class="secondary" aria-label={`${label} ${what}`} onClick={async () => setState((await copyText(text)) ? 'copied' : 'failed')}>
        {label}
      </button>
      <span role="status" class="copy-status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </span>
  );
}

/** A block of code to paste elsewhere, with its copy button. */
export function CodeBlock({ code, what }: { code: string; what: string }) {
  return (
    <div class="codeblock">
      <pre tabIndex={0} aria-label={what}>
        <code>{code}</code>
      </pre>
      <CopyButton text={code} what={what} />
    </div>
  );
}

export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="notice error" role="alert">
      {title ? <strong>{title} </strong> : null}
      {message}
    </div>
  );
}

export function Notice({ kind = 'info', children }: { kind?: 'info' | 'warn' | 'success'; children: ComponentChildren }) {
  return <div class={`notice ${kind}`}>{children}</div>;
}

export function Status({ children }: { children: ComponentChildren }) {
  return (
    <p role="status" class="status">
      {children}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" class="loading">
      Loading {what}…
    </p>
  );
}

/** A 403 from the server: say what is missing and why, in the server's words. */
export function AccessMissing({ error, what }: { error: ApiError; what: string }) {
  return (
    <section class="notice warn access-missing" role="alert" aria-labelledby="access-missing-title">
      <h3 id="access-missing-title">Access missing</h3>
      <p>
        You do not have access to {what}. {/[.!?]$/.test(error.message) ? error.message : `${error.message}.`}
      </p>
      <p>Ask a workspace owner to change your role if you need it.</p>
    </section>
  );
}

export function isForbidden(err: unknown): err is ApiError {
  return err instanceof ApiError && err.status === 403;
}

export interface FieldProps {
  id: string;
  label: string;
  hint?: ComponentChildren;
  error?: string | null;
  children: (describedBy: string | undefined, invalid: boolean) => ComponentChildren;
}

/** A label, the control, a hint and the field's error, tied together with ids for screen readers. */
export function Field({ id, label, hint, error, children }: FieldProps) {
  const ids = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${error ? ' has-error' : ''}`}>
      <label for={id}>{label}</label>
      {children(ids, Boolean(error))}
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** Focuses the first invalid field after a refused submit. */
export function useFocusOnError(field: string | null, formRef: { current: HTMLFormElement | null }) {
  useEffect(() => {
    if (!field || !formRef.current) return;
    const el = formRef.current.querySelector<HTMLElement>(`[name="${field}"]`);
    el?.focus();
  }, [field, formRef]);
}

/** A modal confirmation on the native <dialog>: focus stays inside, Escape cancels. */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  danger?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={(e) => (e.preventDefault(), props.onCancel())}>
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={props.danger ? 'danger' : ''} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export interface PagerProps {
  /** The navigation landmark's name, e.g. "Event pages". */
  label: string;
  page: number;
  pageCount: number;
  /** How many in all, in words ("23 entries"). */
  total: string;
  /** The address of page `n`. */
  link: (n: number) => string;
}

/** ← Previous · Page n of m · Next →, as links so that every page has its own address. */
export function Pager({ label, page, pageCount, total, link }: PagerProps) {
  const last = Math.max(1, pageCount);
  return (
    <nav class="pager" aria-label={label}>
      {page > 1 ? (
        <a class="button secondary" href={link(Math.min(page - 1, last))} rel="prev">
          ← Previous
        </a>
      ) : (
        <span class="button secondary" aria-disabled="true">
          ← Previous
        </span>
      )}
      <span class="page-info" aria-live="polite">
        Page {page} of {last} · {total}
      </span>
      {page < pageCount ? (
        <a class="button secondary" href={link(page + 1)} rel="next">
          Next →
        </a>
      ) : (
        <span class="button secondary" aria-disabled="true">
          Next →
        </span>
      )}
    </nav>
  );
}

/** The "Per page" choice of a paged list's filter form; the value stays a string, as the form's draft keeps it. */
export function PageSizeField({ id, sizes, value, onChange }: { id: string; sizes: readonly number[]; value: string; onChange: (size: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Per page</label>
      <select id={id} name="pageSize" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {sizes.map((s) => (
          <option value={String(s)} key={s}>
            {s}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Who is signed in, in the page header of the dashboard and of the portal, with the way out. */
export function SignedInAs({ email, onSignOut }: { email: string; onSignOut: () => void }) {
  return (
    <div class="who">
      <span class="email" title={email}>
        {email}
      </span>
      <button type="button" class="secondary small" onClick={onSignOut}>
        Sign out
      </button>
    </div>
  );
}
