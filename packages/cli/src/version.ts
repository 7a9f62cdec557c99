// Only the one field: the bundler keeps `version` and drops the rest of package.json.
import { version } from '../package.json';

export const CLI_VERSION: string = version;
import { hostname } from 'node:os';

/**
 * With the host name: the browser's confirmation of `reftrack login` names the device that asked,
 * and the dashboard's Access page labels each login token with it.
 */
export const USER_AGENT = `reftrack-cli/${CLI_VERSION} node/${process.version} (${process.platform}; ${hostname().replace(/[^\x20-\x7e]/g, '').slice(0, 64)})`;
