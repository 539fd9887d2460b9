// The rules core's public surface.
export * from './cards.js';
export * from './card-names.js';
export * from './actions.js';
export * from './errors.js';
export * from './ruleset.js';
export * from './trick.js';
export * from './ledger.js';
export * from './sizes.js';
export * from './phases.js';
export * from './results.js';
export type { HandLog } from './history.js';
export { KratzenGame, createGame, type NewStateOptions, type SessionStart } from './kratzen-game.js';
export { KratzenState } from './game.js';
export * from './seat-view.js';
export * from './sample.js';
export * from './record.js';
export * from './random-play.js';
export * from './zod-issue.js';
