/**
 * Sign-in. With OIDC (GET /api/dashboard/sign-in-options says `oidc`): one "Sign in with <provider>"
 * link to the server's authorization code flow, which comes back to the page asked for. With the
 * development identity provider: an e-mail form (POST /dev-idp/token, then POST
 * /api/dashboard/session), and a pasted id_token for scripts and tests. Under OIDC the pasted-token
 * path stays on the API for scripts, but is not offered here.
 */
import { useEffect, useState } from 'preact/hooks';
import { BRAND } from '@reftrack/contract';
import { api, ApiError } from '../lib/api.js';
import { sameOriginPath, type DashboardSession, type SignInOptions } from '@reftrack/contract';
import { ErrorNotice, Loading } from '../components/ui.js';

type Mode = 'checking' | 'development' | 'oidc' | 'unknown';

export function SignInPage({ onSignedIn }: { onSignedIn: (info: DashboardSession) => void }) {
  const [mode, setMode] = useState<Mode>('checking');
  const [options, setOptions] = useState<SignInOptions | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = `Sign in — ${BRAND.name}`;
    api.signInOptions().then(
      (o) => {
        setOptions(o);
        setMode(o.mode);
      },
      (err) => {
        setError(err);
        setMode('unknown');
      },
    );
  }, []);
  const returnTo = sameOriginPath(new URLSearchParams(location.search).get('return_to'), location.origin, '/');

  return (
    <section class="narrow">
      <h1>Sign in to {BRAND.name}</h1>
      <div class="panel">
      {mode === 'checking' ? <Loading what="sign-in options" /> : null}
      {mode === 'development' ? <DevSignIn onSignedIn={onSignedIn} onOidc={() => location.reload()} /> : null}
      {mode === 'oidc' && options ? (
        <div class="stack">
          <p>Sign-in goes through your organisation's identity provider.</p>
          <p>
            <a class="button" id="oidc-sign-in" href={`${options.start_url}?return_to=${encodeURIComponent(returnTo)}`}>
              Sign in with {options.provider_name}
            </a>
          </p>
        </div>
      ) : null}
      {mode === 'unknown' ? <ErrorNotice error={error} title="Sign-in options could not be loaded:" /> : null}
      </div>
    </section>
  );
}

function DevSignIn({ onSignedIn, onOidc }: { onSignedIn: (info: DashboardSession) => void; onOidc: () => void }) {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const token = await api.devToken(email.trim());
      onSignedIn(await api.signIn(token));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) onOidc();
      else setError(err);
      setBusy(false);
    }
  }
  return (
    <>
      <p class="notice warn dev-note">
        Development identity provider: any e-mail address signs in. Configure <code>OIDC_ISSUER</code> for production.
      </p>
      <form onSubmit={submit} class="stack" aria-describedby="signin-error">
        <div class="field">
          <label for="email">E-mail</label>
          <input id="email" name="email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} autofocus />
        </div>
        <div>
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </div>
      </form>
      <div id="signin-error">
        <ErrorNotice error={error} title="Sign-in failed:" />
      </div>
      <TokenSignIn onSignedIn={onSignedIn} />
    </>
  );
}

function TokenSignIn({ onSignedIn, open = false }: { onSignedIn: (info: DashboardSession) => void; open?: boolean }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api.signIn(token.trim()));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  return (
    <details class="token-signin" open={open}>
      <summary>I have an id_token</summary>
      <form onSubmit={submit} class="stack">
        <div class="field">
          <label for="id_token">id_token from your identity provider</label>
          <textarea id="id_token" name="id_token" rows={4} required spellcheck={false} autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
        </div>
        <div>
          <button type="submit" disabled={busy}>
            {busy ? 'Signing in…' : 'Sign in with this token'}
          </button>
        </div>
      </form>
      <ErrorNotice error={error} title="Sign-in failed:" />
    </details>
  );
}
