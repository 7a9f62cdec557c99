/** Three apps on one origin: the partner portal under /portal, the public application page under /apply, the advertiser's dashboard everywhere else. */
import { APPLY_PATH } from '@reftrack/contract';
import { App } from './app.js';
import { PortalApp } from './portal/portal-app.js';
import { ApplyApp } from './portal/apply-page.js';
import { useLocation } from './lib/router.js';

export function Root() {
  const loc = useLocation();
  if (loc.path.startsWith(`${APPLY_PATH}/`)) return <ApplyApp slug={loc.path.slice(APPLY_PATH.length + 1).replace(/\/$/, '')} />;
  return loc.path === '/portal' || loc.path.startsWith('/portal/') ? <PortalApp /> : <App />;
}
