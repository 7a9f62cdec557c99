// Only the one field: the bundler keeps `version` and drops the rest of package.json.
import { version } from '../package.json';

export const CLI_VERSION: string = version;
export const USER_AGENT = `reftrack-cli/${CLI_VERSION} node/${process.version}`;
