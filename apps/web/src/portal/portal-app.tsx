/**
 * The partner portal (docs/partners.md): its own session (the portal cookie, never the dashboard's),
 * its own header, the dashboard's design. Paths: /portal/sign-in, /portal/verify and
 * /portal/invitation (the e-mailed links: the page posts the token, so a mail scanner that follows
 * a link spends nothing), /portal (the person's partner records) and /portal/partners/:id.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { BRAND, PORTAL_PATHS, type PortalMe } from '@reftrack/contract';
import { installLinkHandler, match, navigate, useLocation } from '../lib/router.js';
import { ErrorNotice, Loading, SignedInAs } from '../components/ui.js';
import { portalApi } from './portal-api.js';
import { PortalPartnerPage } from './partner-page.js';

type State = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; me: PortalMe };

export function PortalApp() {
  const loc = useLocation();
  const [state, setState] = useState<State>({ status: 'loading' });
  const mainRef = useRef<HTMLElement>(null);
  useEffect(() => installLinkHandler(), []);
  const refresh = () =>
    portalApi.me().then(
      (me) => setState({ status: 'signed-in', me }),
      () => setState({ status: 'signed-out' }),
    );
  useEffect(() => {
    refresh();
  }, []);
  useEffect(() => {
    const heading = mainRef.current?.querySelector<HTMLElement>('h1');
    if (heading && document.activeElement === document.body) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }, [loc.path, state.status]);

  const isLinkPage = loc.path === PORTAL_PATHS.verify || loc.path === PORTAL_PATHS.invitation;
  useEffect(() => {
    if (state.status === 'signed-out' && !isLinkPage && loc.path !== PORTAL_PATHS.signIn) navigate(PORTAL_PATHS.signIn, { replace: true });
    if (state.status === 'signed-in' && (loc.path === PORTAL_PATHS.signIn || loc.path === PORTAL_PATHS.home) && state.me.partners.length > 0) {
      if (state.me.partners.length === 1 || loc.path === PORTAL_PATHS.signIn) navigate(`/portal/partners/${state.me.partners[0]!.partner_id}`, { replace: true });
    }
  }, [state.status, loc.path]);

  async function signOut() {
    await portalApi.signOut().catch(() => undefined);
    setState({ status: 'signed-out' });
    navigate(PORTAL_PATHS.signIn);
  }

  const me = state.status === 'signed-in' ? state.me : null;
  let page;
  let route: Record<string, string> | null = null;
  if (loc.path === PORTAL_PATHS.verify) page = <LinkLanding kind="verify" onSignedIn={refresh} />;
  else if (loc.path === PORTAL_PATHS.invitation) page = <LinkLanding kind="invitation" onSignedIn={refresh} />;
  else if (state.status === 'loading') page = <Loading what="your partner portal" />;
  else if (!me) page = <PortalSignIn />;
  else if ((route = match('/portal/partners/:id', loc.path)) && /^\d+$/.test(route.id!)) page = <PortalPartnerPage key={route.id} me={me} partnerId={Number(route.id)} />;
  else page = <PartnerRecords me={me} />;

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={PORTAL_PATHS.home}>
          <span aria-hidden="true" class="logo">
            ◆
          </span>{' '}
          {BRAND.name} · Partner portal
        </a>
        {me ? (
          <>
            <nav aria-label="Partner records">
              {me.partners.map((p) => (
                <a key={p.partner_id} href={`/portal/partners/${p.partner_id}`} aria-current={loc.path === `/portal/partners/${p.partner_id}` ? 'page' : undefined}>
                  {p.workspace_name ? `${p.workspace_name} · ` : ''}
                  {p.partner_name}
                </a>
              ))}
            </nav>
            <SignedInAs email={me.email} onSignOut={signOut} />
          </>
        ) : null}
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

function PartnerRecords({ me }: { me: PortalMe }) {
  useEffect(() => {
    document.title = `Partner portal — ${BRAND.name}`;
  }, []);
  return (
    <section>
      <h1>Your partner programs</h1>
      {me.partners.length === 0 ? (
        <p>You are not a partner of any program (any more). Ask the program's owner for an invitation.</p>
      ) : (
        <ul class="stack">
          {me.partners.map((p) => (
            <li key={p.partner_id}>
              <a href={`/portal/partners/${p.partner_id}`}>
                {p.partner_name} at {p.workspace_name || 'a workspace'}
              </a>{' '}
              <span class="muted">({p.programs.map((x) => x.program_name).join(', ') || 'no program yet'})</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function PortalSignIn() {
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = `Partner sign-in — ${BRAND.name}`;
  }, []);
  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      setSent((await portalApi.requestLink(email)).message);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <section class="narrow">
      <h1>Sign in to your partner portal</h1>
      <div class="panel">
        <form class="stack" onSubmit={submit} noValidate>
          <p>We send a sign-in link to your e-mail address. No password.</p>
          <div class="field">
            <label for="portal-email">E-mail address</label>
            <input id="portal-email" type="email" autocomplete="email" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
          </div>
          <p>
            <button type="submit" disabled={busy}>
              {busy ? 'Sending…' : 'Send me a sign-in link'}
            </button>
          </p>
          <div role="status">{sent ? <p class="notice success">{sent}</p> : null}</div>
          <ErrorNotice error={error} />
        </form>
      </div>
    </section>
  );
}

/** The page an e-mailed link opens: one button posts its token (a GET alone never signs anyone in). */
function LinkLanding({ kind, onSignedIn }: { kind: 'verify' | 'invitation'; onSignedIn: () => Promise<void> }) {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const title = kind === 'invitation' ? 'Accept your invitation' : 'Finish signing in';
  useEffect(() => {
    document.title = `${title} — ${BRAND.name}`;
  }, []);
  async function go() {
    setBusy(true);
    setError(null);
    try {
      await (kind === 'invitation' ? portalApi.accept(token) : portalApi.verify(token));
      // The token leaves the address bar and the history once spent.
      history.replaceState(null, '', PORTAL_PATHS.home);
      await onSignedIn();
      navigate(PORTAL_PATHS.signIn, { replace: true });
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  return (
    <section class="narrow">
      <h1>{title}</h1>
      <div class="panel stack">
        <p>{kind === 'invitation' ? 'You were invited to see your referral links, results, commissions and payouts.' : 'This link signs you in once.'}</p>
        <p>
          <button type="button" onClick={go} disabled={busy}>
            {busy ? 'Signing in…' : kind === 'invitation' ? 'Accept and sign in' : 'Sign in'}
          </button>
        </p>
        <ErrorNotice error={error} />
        {error ? (
          <p>
            <a href={PORTAL_PATHS.signIn}>Ask for a new sign-in link</a>
          </p>
        ) : null}
      </div>
    </section>
  );
}
