// kratzen-gym: the package entry point. Everything a user imports comes through here.
export * from './env/rules/index.js';
export * from './env/index.js';
export * from './agents/index.js';
export * from './checkpoints/index.js';
export * from './training/index.js';
export * from './bridge/index.js';
