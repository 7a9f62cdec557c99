export * from './test-server.js';
export * from './fixture.js';
export * from './databases.js';
