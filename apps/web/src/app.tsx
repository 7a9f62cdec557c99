/** The dashboard shell: session, header, and the page for the current path. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { BRAND, sameOriginPath } from '@reftrack/contract';
import { api, setSessionLostHandler } from './lib/api.js';
import type { DashboardSession } from '@reftrack/contract';
import { installLinkHandler, match, navigate, useLocation } from './lib/router.js';
import { SignInPage } from './pages/sign-in.js';
import { ProgramsPage } from './pages/programs.js';
import { ProgramPage, PROGRAM_TABS, type ProgramTab } from './pages/program.js';
import { AccessPage } from './pages/access.js';
import { AuditLogPage, auditWorkspaces } from './pages/audit-log.js';
import { WebhooksPage, webhookWorkspaces } from './pages/webhooks.js';
import { Loading, SignedInAs } from './components/ui.js';

type SessionState = { status: 'loading' } | { status: 'signed-out' } | { status: 'signed-in'; info: DashboardSession };

/** After sign-in: back to the page asked for, when it is on this origin (never off-site). */
function safeReturn(to: string | null): string {
  const path = sameOriginPath(to, location.origin, '/programs');
  return path === '/sign-in' || path.startsWith('/sign-in?') ? '/programs' : path;
}

export function App() {
  const loc = useLocation();
  const [session, setSession] = useState<SessionState>({ status: 'loading' });
  const mainRef = useRef<HTMLElement>(null);
  const firstRender = useRef(true);

  useEffect(() => installLinkHandler(), []);
  useEffect(() => {
    api.session().then(
      (info) => setSession({ status: 'signed-in', info }),
      () => setSession({ status: 'signed-out' }),
    );
  }, []);
  useEffect(() => {
    setSessionLostHandler(() => setSession({ status: 'signed-out' }));
    return () => setSessionLostHandler(null);
  }, []);

  // After a client-side navigation, move focus to the page so screen readers announce it.
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    const heading = mainRef.current?.querySelector<HTMLElement>('h1');
    if (heading) {
      heading.tabIndex = -1;
      heading.focus({ preventScroll: false });
    }
  }, [loc.path]);

  const signedIn = session.status === 'signed-in' ? session.info : null;

  // Signed-out visitors of a dashboard path see the sign-in form and come back afterwards.
  useEffect(() => {
    if (session.status === 'signed-out' && loc.path !== '/sign-in') {
      navigate(`/sign-in?return_to=${encodeURIComponent(loc.path + (loc.query.toString() ? `?${loc.query}` : ''))}`, { replace: true });
    }
    if (session.status === 'signed-in' && (loc.path === '/sign-in' || loc.path === '/')) {
      navigate(safeReturn(loc.query.get('return_to')), { replace: true });
    }
  }, [session.status, loc.path]);

  async function signOut() {
    const out = await api.signOut().catch(() => undefined);
    // The provider's session ends too: its end-session page returns the browser to /signed-out.
    if (out?.end_session_url) {
      location.assign(out.end_session_url);
      return;
    }
    setSession({ status: 'signed-out' });
    navigate('/sign-in');
  }

  let page;
  let programRoute: Record<string, string> | null = null;
  if (session.status === 'loading') page = <Loading what="your session" />;
  else if (!signedIn) page = <SignInPage onSignedIn={(info) => setSession({ status: 'signed-in', info })} />;
  else if (match('/programs', loc.path)) page = <ProgramsPage session={signedIn} />;
  else if (match('/access', loc.path)) page = <AccessPage session={signedIn} />;
  else if (match('/audit-log', loc.path)) page = <AuditLogPage session={signedIn} query={loc.query} />;
  else if (match('/webhooks', loc.path)) page = <WebhooksPage session={signedIn} query={loc.query} />;
  else if ((programRoute = match('/programs/:id/:tab?', loc.path)) && /^\d+$/.test(programRoute.id)) {
    const tab = (programRoute.tab ?? 'settings') as ProgramTab;
    page = PROGRAM_TABS.some((t) => t.id === tab) ? <ProgramPage id={Number(programRoute.id)} tab={tab} query={loc.query} /> : <NotFound />;
  } else if (loc.path === '/' || loc.path === '/sign-in') page = <Loading what="your programs" />;
  else page = <NotFound />;

  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={signedIn ? '/programs' : '/sign-in'}>
          <span aria-hidden="true" class="logo">
            ◆
          </span>{' '}
          {BRAND.name}
        </a>
        {signedIn ? (
          <>
            <nav aria-label="Main">
              <a href="/programs" aria-current={loc.path.startsWith('/programs') ? 'page' : undefined}>
                Programs
              </a>
              <a href="/access" aria-current={loc.path === '/access' ? 'page' : undefined}>
                Access
              </a>
              {webhookWorkspaces(signedIn).length > 0 ? (
                <a href="/webhooks" aria-current={loc.path === '/webhooks' ? 'page' : undefined}>
                  Webhooks
                </a>
              ) : null}
              {auditWorkspaces(signedIn).length > 0 ? (
                <a href="/audit-log" aria-current={loc.path === '/audit-log' ? 'page' : undefined}>
                  Audit log
                </a>
              ) : null}
            </nav>
            <SignedInAs email={signedIn.account.email} onSignOut={signOut} />
          </>
        ) : null}
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <a href="/programs">Go to your programs</a>.
      </p>
    </section>
  );
}
