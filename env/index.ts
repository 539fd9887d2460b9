// The environment layer's public surface (the rules core is re-exported from the package root).
export * from './observation.js';
export * from './observation-view.js';
export * from './oracle.js';
export * from './table.js';
export * from './policy.js';
export * from './env.js';
export * from './single-agent-env.js';
export * from './vec-env.js';
export * from './worker-vec-env.js';
export * from './check-env.js';
export * from './table-view.js';
