export * from './brand.js';
export * from './limits.js';
export * from './errors.js';
export * from './routes.js';
export * from './types.js';
export * from './dashboard.js';
