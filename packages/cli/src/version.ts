import pkg from '../package.json' with { type: 'json' };

export const CLI_VERSION: string = pkg.version;
export const USER_AGENT = `reftrack-cli/${CLI_VERSION} node/${process.version}`;
