/** Two apps on one origin: the partner portal under /portal, the advertiser's dashboard everywhere else. */
import { App } from './app.js';
import { PortalApp } from './portal/portal-app.js';
import { useLocation } from './lib/router.js';

export function Root() {
  const loc = useLocation();
  return loc.path === '/portal' || loc.path.startsWith('/portal/') ? <PortalApp /> : <App />;
}
