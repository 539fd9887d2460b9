// The rules core's public surface.
export * from './cards.js';
export * from './actions.js';
export * from './errors.js';
export * from './ruleset.js';
export * from './trick.js';
export * from './ledger.js';
export * from './game.js';
export * from './record.js';
export * from './random-play.js';
