/** Programmatic entry: start the server in-process (tests, embedding). */
export { startServer, type RunningServer, type StartOptions } from './server.js';
export { loadConfig, parseDatabaseUrl, type Config } from './config.js';
export { createDb } from './db/knex.js';
export { loadFixture, type Fixture } from './seed/fixture.js';
export { HashedWindowStorage, withHashedStorage } from './http/hashed-window-storage.js';
