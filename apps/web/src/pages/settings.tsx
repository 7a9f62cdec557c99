/** Settings & key: the program's fields, and its API key (masked; generate or regenerate, owner only). */
import { useState } from 'preact/hooks';
import { ERRORS, formatMessage } from '@reftrack/contract';
import type { DashboardProgram, GeneratedKey } from '@reftrack/contract';
import { api } from '../lib/api.js';
import { can } from '../lib/roles.js';
import { formatDateTime } from '../lib/format.js';
import { ConfirmDialog, CopyButton, ErrorNotice, Notice } from '../components/ui.js';
import { formFromProgram, ProgramFormView } from '../components/program-form.js';

export function SettingsTab({ program, onChange, reload, created }: { program: DashboardProgram; onChange: (p: DashboardProgram) => void; reload: () => void; created: boolean }) {
  const mayWrite = can(program.role, 'programs:write');
  return (
    <>
      {created ? (
        <Notice kind="success">
          <p>
            Program created. Next: generate its API key below, then add partners and links, and follow the <a href={`/programs/${program.id}/readiness`}>readiness checklist</a>.
          </p>
        </Notice>
      ) : null}
      <KeySection program={program} reload={reload} />
      <section class="panel" aria-labelledby="settings-title">
        <h2 id="settings-title">Program settings</h2>
        {!mayWrite ? <p class="notice info">{formatMessage(ERRORS.permissionDenied.message, { permission: 'programs:write' })}. You can read these settings.</p> : null}
        <ProgramFormView
          key={program.id}
          idPrefix="settings"
          initial={formFromProgram(program)}
          submitLabel="Save settings"
          disabled={!mayWrite}
          onSubmit={async (fields) => {
            const updated = await api.updateProgram(program.id, fields);
            onChange({ ...program, ...updated, role: program.role });
            return 'Settings saved.';
          }}
        />
      </section>
    </>
  );
}

function KeySection({ program, reload }: { program: DashboardProgram; reload: () => void }) {
  const owner = can(program.role, 'keys:manage');
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [fresh, setFresh] = useState<GeneratedKey | null>(null);
  const rotateBy = program.key_rotation?.rotate_by;
  const retired = rotateBy ? Date.parse(rotateBy) <= Date.now() : false;
  // A key made with the program was never shown (5.1): nobody can have deployed it, so generating
  // the first one is no rotation and needs no warning. Once a key was shown, a new one replaces it.
  const shown = program.api_key_revealed_at !== null || fresh !== null;

  async function generate() {
    setConfirming(false);
    setBusy(true);
    setError(null);
    try {
      setFresh(await api.generateKey(program.id));
      reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section class="panel" aria-labelledby="key-title">
      <h2 id="key-title">API key</h2>
      <p class="muted">
        Your server sends this key as <code>Authorization: Bearer …</code> to report leads, sales and refunds. Keep it on the server. It is never shown again after it is generated; a lost key
        cannot be recovered, only replaced.
      </p>
      {rotateBy ? (
        <div class={`notice ${retired ? 'error' : 'warn'}`} role="alert">
          <strong>{retired ? 'This key was retired' : 'This key is marked for rotation'}</strong>{' '}
          {retired ? `on ${formatDateTime(rotateBy)}: calls made with it answer 401 api_key_rotation_required.` : `and stops working on ${formatDateTime(rotateBy)} (${rotateBy}).`}{' '}
          {owner ? 'Generate a new key and deploy it before then.' : 'Ask a workspace owner to generate a new key.'}
        </div>
      ) : null}
      <dl class="facts key-facts">
        <div>
          <dt>Current key</dt>
          <dd>
            {shown ? (
              <code class="masked" aria-label={program.api_token_masked ? `key ending in ${program.api_token_masked.slice(-4)}` : 'no key'}>
                {program.api_token_masked ?? 'none'}
              </code>
            ) : (
              <span class="muted">Not generated yet</span>
            )}
          </dd>
        </div>
      </dl>
      {!shown && owner ? <p>This program's key has never been shown, so nothing uses it yet: generate it to report leads and sales from your server.</p> : null}
      {fresh ? (
        <div class="notice success new-key" role="status" aria-live="polite">
          <h3>Your new key — shown only once</h3>
          <p>{fresh.note}</p>
          <div class="key-row">
            <label for="new-key" class="visually-hidden">
              New API key
            </label>
            <input id="new-key" class="mono" readOnly value={fresh.api_key} onFocus={(e) => e.currentTarget.select()} />
            <CopyButton text={fresh.api_key} what="the new API key" />
          </div>
          <button type="button" class="link" onClick={() => setFresh(null)}>
            I stored it — hide the key
          </button>
        </div>
      ) : null}
      {owner ? (
        <div class="actions">
          {shown ? (
            <button type="button" class="danger" disabled={busy} onClick={() => setConfirming(true)}>
              {busy ? 'Generating…' : 'Regenerate key'}
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={generate}>
              {busy ? 'Generating…' : 'Generate key'}
            </button>
          )}
        </div>
      ) : (
        <p class="notice info">{ERRORS.ownerRequired.message}.</p>
      )}
      <ErrorNotice error={error} />
      <ConfirmDialog
        open={confirming}
        title="Regenerate the API key?"
        confirmLabel="Generate new key"
        danger
        onConfirm={generate}
        onCancel={() => setConfirming(false)}
      >
        <p>
          The current key{program.api_token_masked ? <> (<code>{program.api_token_masked}</code>)</> : null} <strong>stops working at once</strong>. There is no overlap: every call made with it answers
          401 until you deploy the new key.
        </p>
        <p>The new key is shown once, right after this step.</p>
      </ConfirmDialog>
    </section>
  );
}
