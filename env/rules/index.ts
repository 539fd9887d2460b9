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
/** What a reader of a state gets: every accessor, no transition (env.state, VecEnv.stateOf). */
export type { StateReader } from './state-reader.js';
// liveSeatView is not here: its views write into the state's own memory. Only the observation
// encoder reads it (env/observation.ts imports seat-view.js; test/architecture.test.ts checks).
export { SeatFacts, SeatView, TableAt, seatView } from './seat-view.js';
export * from './sample.js';
export * from './record.js';
export * from './steps.js';
export * from './random-play.js';
export * from './zod-issue.js';
