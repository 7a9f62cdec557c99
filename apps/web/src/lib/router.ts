/**
 * A tiny history-API router: the current location as state, `navigate()` to move, and a document
 * click handler that turns same-origin links into client-side navigations.
 */
import { useEffect, useState } from 'preact/hooks';

const NAV_EVENT = 'reftrack:navigate';

/** Paths the server answers itself: a link to one of them is a full page load. */
export const SERVER_PATHS = /^\/(api\/|dev-idp|dev\/|cli\/|docs\/|auth\/|signed-out|tracker|healthz)/;

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAV_EVENT));
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const update = () => setLoc(current());
    window.addEventListener('popstate', update);
    window.addEventListener(NAV_EVENT, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAV_EVENT, update);
    };
  }, []);
  return loc;
}

/** The in-app path of a click on a link, or null when the browser should handle it. */
export function inAppTarget(event: MouseEvent, origin: string): string | null {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return null;
  const anchor = (event.target as Element | null)?.closest?.('a');
  if (!anchor || !anchor.href || anchor.target || anchor.hasAttribute('download')) return null;
  const url = new URL(anchor.href);
  if (url.origin !== origin || SERVER_PATHS.test(url.pathname)) return null;
  if (url.hash && url.pathname === location.pathname) return null;
  return url.pathname + url.search;
}

export function installLinkHandler(): () => void {
  const onClick = (event: MouseEvent) => {
    const to = inAppTarget(event, location.origin);
    if (to === null) return;
    event.preventDefault();
    navigate(to);
  };
  document.addEventListener('click', onClick);
  return () => document.removeEventListener('click', onClick);
}

/** Matches `/programs/:id/:tab?` style patterns; returns the named parts or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  let i = 0;
  for (; i < want.length; i++) {
    const w = want[i];
    const optional = w.endsWith('?');
    const name = w.replace(/^:|\?$/g, '');
    if (got[i] === undefined) {
      if (optional) continue;
      return null;
    }
    if (w.startsWith(':')) params[name] = decodeURIComponent(got[i]);
    else if (w !== got[i]) return null;
  }
  return got.length <= want.length ? params : null;
}
