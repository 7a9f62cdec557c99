// Only the one field: the bundler keeps `version` and drops the rest of package.json.
import { version } from '../package.json';

/** Sent in the User-Agent: package.json's version, which changesets manages (inlined at build time). */
export const SDK_VERSION: string = version;
